/* runplace: where `vram run` puts a job, and what it leaves behind.
 *
 * Admission: a slice is a promise. A GPU's room is its free memory less what
 * the other live slices on it, every user's, have not allocated yet.
 * There is no lock to take (one that every user can take is one any user
 * can hold forever): a job publishes its slice first, pending, and only
 * then checks the room, counting every other slice it sees, pending ones
 * too. Of two jobs deciding at once, the later to publish sees the other's
 * slice, so the same free bytes are never promised twice; if both fall
 * short they withdraw and try again after a random pause, for a moment
 * even without --wait. Group files of jobs whose `vram run` died are
 * removed on the way (this user's; others' are ignored), so a crash never
 * leaves a promise that blocks the GPU. */
#include "cli/runplace.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "app/clock.h"
#include "core/err.h"
#include "core/place.h"
#include "core/units.h"
#include "host/proc.h"
#include "ipc/group.h"
#include "ipc/slices.h"

#define MAX_GPUS 64
/* how long jobs deciding at the same instant retry before a refusal */
#define CONTEND_MS 500

/* What the live slices promise on each GPU, but for our own. */
struct tally {
    const struct snap *s;
    size_t n;
    const char *self; /* our group file's name, or NULL */
    uint64_t sum[MAX_GPUS];
    bool pending[MAX_GPUS]; /* some of it by jobs deciding now */
    /* the largest promise on each GPU, to say whose it is */
    uint64_t top[MAX_GPUS];
    uint32_t top_uid[MAX_GPUS];
    int32_t top_pid[MAX_GPUS];
};

static int add_promise(const struct slice *sl, void *arg)
{
    struct tally *t = arg;
    if (t->self && strcmp(sl->name, t->self) == 0)
        return 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct snap_gpu *g = &t->s->gpus[i];
        if (!slices_promises(sl, (unsigned)i, g->uuid, g->mem.total))
            continue;
        uint64_t u = slices_unused(sl);
        t->sum[i] = t->sum[i] + u < t->sum[i] ? UINT64_MAX : t->sum[i] + u;
        if (sl->v.state == GROUP_PENDING)
            t->pending[i] = true;
        if (u > t->top[i]) {
            t->top[i] = u;
            t->top_uid[i] = sl->v.owner;
            t->top_pid[i] = sl->v.creator;
        }
    }
    return 0;
}

/* Room on every GPU: free memory less the others' promises. */
static void rooms(const struct snap *s, const char *self, struct tally *t, uint64_t *room)
{
    memset(t, 0, sizeof *t);
    t->s = s;
    t->n = s->ngpus < MAX_GPUS ? s->ngpus : MAX_GPUS;
    t->self = self;
    slices_each(true, add_promise, t);
    for (size_t i = 0; i < t->n; i++)
        room[i] = place_room(s->gpus[i].mem.free, t->sum[i]);
}

/* "a" random pause of 2 to 20 ms, so that two jobs that withdrew together
 * do not collide again */
static void pause_randomly(void)
{
    unsigned r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = (unsigned)getpid() ^ (unsigned)clock_mono_ms();
    struct timespec ts = {0, (long)(2 + r % 19) * 1000 * 1000};
    nanosleep(&ts, NULL);
}

/* "; the largest promise there: 9.00 GiB, user bob's (vram run 4242)" */
static void whose(const struct tally *t, size_t gpu, char *out, size_t len)
{
    out[0] = '\0';
    if (gpu >= t->n || t->top[gpu] == 0)
        return;
    char b[32], user[64];
    struct passwd pw, *res = NULL;
    char buf[1024];
    if (getpwuid_r(t->top_uid[gpu], &pw, buf, sizeof buf, &res) == 0 && res)
        snprintf(user, sizeof user, "%s", res->pw_name);
    else
        snprintf(user, sizeof user, "%u", (unsigned)t->top_uid[gpu]);
    snprintf(out, len, "; the largest promise there: %s, user %s's (vram run %d)",
             units_fmt_size(t->top[gpu], b, sizeof b), user, (int)t->top_pid[gpu]);
}

/* "auto" -> -1; an index or a UUID (or its prefix) -> that GPU; else -2. */
static int resolve_gpu(const struct snap *s, const char *arg)
{
    if (!strcmp(arg, "auto"))
        return -1;
    char *end;
    long v = strtol(arg, &end, 10);
    if (*arg && *end == '\0')
        return v >= 0 && (size_t)v < s->ngpus ? (int)v : -2;
    size_t n = strlen(arg);
    int found = -2;
    for (size_t i = 0; i < s->ngpus && n >= 8; i++)
        if (strncmp(s->gpus[i].uuid, arg, n) == 0)
            found = found == -2 ? (int)i : -3; /* -3: ambiguous */
    return found == -3 ? -2 : found;
}

static void list_gpus(const struct snap *s, char *out, size_t len)
{
    size_t at = 0;
    for (size_t i = 0; i < s->ngpus && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%s%zu (%s)", i ? ", " : "", i, s->gpus[i].uuid);
}

/* Publishes our slice on pick, then checks again with it in place: VRAM_OK
 * (admitted), or 1 (withdrawn: room[pick] is the room seen). */
static int publish(struct probe *p, struct snap *s, int pick, uint64_t size,
                   struct runplace_choice *out, struct tally *t, uint64_t *room, char *err,
                   size_t errlen)
{
    if (group_create(out->group_path, sizeof out->group_path, size ? size : UINT64_MAX,
                     (unsigned)pick, s->gpus[pick].uuid, clock_wall_ms()) < 0) {
        snprintf(err, errlen, "cannot create a group file in %s: %s", group_dir(), strerror(errno));
        return VRAM_EFAIL;
    }
    const char *name = strrchr(out->group_path, '/');
    name = name ? name + 1 : out->group_path;
    probe_sample(p, s, 0, clock_wall_ms());
    rooms(s, name, t, room);
    struct group g;
    if (room[pick] >= size && group_open(&g, out->group_path) == 0) {
        group_set_state(&g, GROUP_ADMITTED);
        group_close(&g);
        out->gpu = (unsigned)pick;
        return VRAM_OK;
    }
    unlink(out->group_path);
    out->group_path[0] = '\0';
    return 1;
}

int runplace_pick(struct probe *p, struct snap *s, const char *gpu, uint64_t size, bool wait,
                  double timeout, bool quiet, struct runplace_choice *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (probe_sample(p, s, PROBE_ENERGY, clock_wall_ms()) < 0 || s->ngpus == 0) {
        snprintf(err, errlen, "no NVIDIA GPU found");
        return VRAM_EFAIL;
    }
    int forced = resolve_gpu(s, gpu);
    if (forced == -2) {
        char list[1024];
        list_gpus(s, list, sizeof list);
        snprintf(err, errlen, "--gpu '%s': no such GPU; there are: %s", gpu, list);
        return VRAM_EINPUT;
    }
    if (group_dir_check(err, errlen) < 0)
        return VRAM_EFAIL;
    uint64_t start = clock_mono_ms(), last_note = 0;
    char b1[32], b2[32], who[200];
    struct tally t;
    for (bool first = true;; first = false) {
        if (!first)
            probe_sample(p, s, PROBE_ENERGY, clock_wall_ms());
        uint64_t room[MAX_GPUS] = {0};
        size_t n = s->ngpus < MAX_GPUS ? s->ngpus : MAX_GPUS;
        rooms(s, NULL, &t, room);
        int pick;
        if (forced >= 0)
            pick = room[forced] >= size ? forced : -1;
        else
            pick = place_best(room, n, size);
        if (pick >= 0) {
            int rc = publish(p, s, pick, size, out, &t, room, err, errlen);
            if (rc <= 0) {
                if (rc == VRAM_OK && !quiet && last_note)
                    fputc('\n', stderr);
                return rc;
            }
            if (t.pending[pick] && clock_mono_ms() - start < CONTEND_MS) {
                pause_randomly(); /* another job is deciding on this GPU too */
                continue;
            }
        }
        size_t best = forced >= 0 ? (size_t)forced : 0;
        for (size_t i = 0; forced < 0 && i < n; i++)
            if (room[i] > room[best])
                best = i;
        double waited = (double)(clock_mono_ms() - start) / 1000;
        if (!wait || (timeout > 0 && waited >= timeout)) {
            whose(&t, best, who, sizeof who);
            snprintf(err, errlen, "%s: %s free for %s (GPU %zu has the most room: %s%s)%s",
                     wait ? "timed out waiting" : "no GPU has room",
                     units_fmt_size(size, b1, sizeof b1), forced >= 0 ? "this GPU" : "any GPU",
                     best, units_fmt_size(room[best], b2, sizeof b2), who,
                     wait ? "" : "; add --wait to queue until one has");
            return VRAM_EFAIL;
        }
        uint64_t now = clock_mono_ms();
        if (!quiet && now - last_note >= 1000) {
            fprintf(stderr, "\rvram run: waiting %.0f s for %s free (best now: GPU %zu, %s)  ",
                    waited, units_fmt_size(size, b1, sizeof b1), best,
                    units_fmt_size(room[best], b2, sizeof b2));
            last_note = now;
        }
        struct timespec ts = {0, 250 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

void runplace_done(struct runplace_choice *c)
{
    if (c->group_path[0])
        unlink(c->group_path);
    c->group_path[0] = '\0';
}

/* Our children now: the command's orphans, handed to us as subreaper. */
static int children(uint32_t *out, int max)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    struct dirent *e;
    int n = 0;
    uint32_t self = (uint32_t)getpid();
    while ((e = readdir(d)) && n < max) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        char path[300], buf[1024], comm[64], st;
        uint32_t ppid;
        uint64_t ticks;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        if (hostproc_parse_stat(buf, len, comm, sizeof comm, &st, &ppid, &ticks) == 0 &&
            ppid == self && st != 'Z')
            out[n++] = (uint32_t)strtoul(e->d_name, NULL, 10);
    }
    closedir(d);
    return n;
}

static void reap_zombies(void)
{
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

/* Which of the candidates hold GPU memory now, per the driver. */
static int holding(struct probe *p, struct snap *s, const uint32_t *cand, int n, uint32_t *out,
                   bool quiet, const char *verb)
{
    probe_sample(p, s, PROBE_PROCS, clock_wall_ms());
    int k = 0;
    for (int i = 0; i < n; i++)
        for (size_t g = 0; g < s->ngpus; g++)
            for (size_t j = 0; j < s->gpus[g].nprocs; j++) {
                const struct snap_proc *pr = &s->gpus[g].procs[j];
                if (pr->pid != cand[i] || !(pr->types & (SNAP_PT_COMPUTE | SNAP_PT_GRAPHICS)))
                    continue;
                char b[32];
                if (!quiet)
                    fprintf(stderr, "vram run: pid %u (%s) %s %s on GPU %zu\n", pr->pid, pr->name,
                            verb, pr->used_known ? units_fmt_size(pr->used, b, sizeof b) : "memory",
                            g);
                out[k++] = pr->pid;
                g = s->ngpus;
                break;
            }
    return k;
}

int runplace_leftovers(struct probe *p, struct snap *s, const struct runplace_choice *c, bool reap,
                       bool quiet)
{
    uint32_t cand[GROUP_MEMBERS + 256], held[GROUP_MEMBERS + 256];
    int n = 0;
    struct group_view v;
    if (group_read(c->group_path, &v) == 0)
        for (unsigned i = 0; i < v.nmembers; i++)
            cand[n++] = (uint32_t)v.members[i].pid;
    /* an orphan that joined the group is both a member and our child */
    uint32_t kids[256];
    int nk = children(kids, 256);
    for (int i = 0; i < nk; i++) {
        bool seen = false;
        for (int j = 0; j < n && !seen; j++)
            seen = cand[j] == kids[i];
        if (!seen)
            cand[n++] = kids[i];
    }
    if (n == 0)
        return 0;
    int k = holding(p, s, cand, n, held, quiet, "still holds");
    if (k == 0 || !reap) {
        if (k && !quiet)
            fprintf(stderr, "vram run: --reap would stop %s\n", k == 1 ? "it" : "them");
        return k;
    }
    for (int i = 0; i < k; i++)
        kill((pid_t)held[i], SIGTERM);
    for (int t = 0; t < 50; t++) { /* 5 s of grace, then KILL */
        reap_zombies();
        int alive = 0;
        for (int i = 0; i < k; i++)
            alive += kill((pid_t)held[i], 0) == 0;
        if (!alive)
            break;
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < k; i++)
        if (kill((pid_t)held[i], 0) == 0)
            kill((pid_t)held[i], SIGKILL);
    for (int t = 0; t < 20; t++) {
        reap_zombies();
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    int still = holding(p, s, held, k, cand, quiet, "STILL holds after SIGKILL");
    if (!quiet && still == 0)
        fprintf(stderr, "vram run: reaped %d process%s; their memory is back\n", k,
                k == 1 ? "" : "es");
    return still;
}
