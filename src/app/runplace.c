/* runplace: where a capped job goes, and what `vram run`'s leaves behind.
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
 * leaves a promise that blocks the GPU. A job over several GPUs publishes
 * its slice on each of them before it checks, and withdraws them all if
 * any falls short: it never holds some of its GPUs while it waits for the
 * rest. */
#include "app/runplace.h"

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

#include "host/clock.h"
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
    const struct runplace_choice *self; /* our group files, or NULL */
    uint64_t sum[MAX_GPUS];
    bool pending[MAX_GPUS]; /* some of it by jobs deciding now */
    /* the largest promise on each GPU, to say whose it is */
    uint64_t top[MAX_GPUS];
    uint32_t top_uid[MAX_GPUS];
    int32_t top_pid[MAX_GPUS];
};

static bool ours(const struct runplace_choice *c, const char *name)
{
    for (unsigned i = 0; c && i < c->n; i++) {
        const char *own = strrchr(c->group_path[i], '/');
        if (strcmp(own ? own + 1 : c->group_path[i], name) == 0)
            return true;
    }
    return false;
}

static int add_promise(const struct slice *sl, void *arg)
{
    struct tally *t = arg;
    if (ours(t->self, sl->name))
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
static void rooms(const struct snap *s, const struct runplace_choice *self, struct tally *t,
                  uint64_t *room)
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

/* What was asked, resolved: the GPUs named (forced) or how many, and the
 * slice on each. */
struct ask {
    unsigned n;
    bool forced;
    unsigned gpu[RUNPLACE_MAX];
    const struct gpuspec_sizes *sizes;
};

static uint64_t size_at(const struct ask *a, unsigned pos, unsigned gpu)
{
    return a->sizes && a->sizes->n ? gpuspec_size_for(a->sizes, pos, gpu) : 0;
}

/* The names of gpus to indexes, each once, and keyed sizes for exactly
 * those: VRAM_OK or VRAM_EINPUT with the reason. */
static int resolve_ask(const struct snap *s, const struct gpuspec_gpus *gpus,
                       const struct gpuspec_sizes *sizes, struct ask *a, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    a->sizes = sizes;
    a->n = gpus && gpus->count ? gpus->count : 1;
    a->forced = gpus && gpus->named;
    if (a->n > RUNPLACE_MAX || (!a->forced && a->n > (s->ngpus < MAX_GPUS ? s->ngpus : MAX_GPUS))) {
        snprintf(err, errlen, "%u GPUs asked for; this machine has %zu", a->n, s->ngpus);
        return VRAM_EINPUT;
    }
    for (unsigned i = 0; a->forced && i < a->n; i++) {
        int g = resolve_gpu(s, gpus->name[i]);
        if (g == -1 && a->n == 1) { /* --gpu auto */
            a->forced = false;
            break;
        }
        if (g >= MAX_GPUS) {
            snprintf(err, errlen, "GPU %d: vram run places jobs on the first %d GPUs", g, MAX_GPUS);
            return VRAM_EINPUT;
        }
        if (g < 0) {
            char list[1024];
            list_gpus(s, list, sizeof list);
            snprintf(err, errlen, "%s '%s': no such GPU; there are: %s",
                     a->n == 1 ? "--gpu" : "--gpus", gpus->name[i], list);
            return VRAM_EINPUT;
        }
        for (unsigned j = 0; j < i; j++)
            if (a->gpu[j] == (unsigned)g) {
                snprintf(err, errlen, "--gpus names GPU %d twice ('%s' and '%s')", g, gpus->name[j],
                         gpus->name[i]);
                return VRAM_EINPUT;
            }
        a->gpu[i] = (unsigned)g;
    }
    if (!sizes || !sizes->keyed)
        return VRAM_OK;
    char keys[256], named[256] = "";
    gpuspec_fmt_keys(sizes, keys, sizeof keys);
    bool same = a->forced && sizes->n == a->n;
    for (unsigned i = 0, at = 0; a->forced && i < a->n; i++) {
        same = same && gpuspec_size_for(sizes, i, a->gpu[i]) != 0;
        at += (unsigned)snprintf(named + at, sizeof named - at, "%s%u", i ? "," : "", a->gpu[i]);
        if (at >= sizeof named)
            at = sizeof named - 1;
    }
    if (same)
        return VRAM_OK;
    if (a->forced)
        snprintf(err, errlen,
                 "--vram names GPUs %s and --gpus names GPUs %s: give one size for each GPU of "
                 "--gpus (or one size for all)",
                 keys, named);
    else
        snprintf(err, errlen,
                 "--vram names GPUs %s: sizes per GPU need --gpus naming the same GPUs (--gpus %s)",
                 keys, keys);
    return VRAM_EINPUT;
}

/* Where the job fits in room: its GPUs into pick, true when every one has
 * room for its slice. */
static bool fits(const struct ask *a, const uint64_t *room, size_t n, unsigned *pick)
{
    if (a->forced) {
        for (unsigned i = 0; i < a->n; i++) {
            pick[i] = a->gpu[i];
            if (room[pick[i]] < size_at(a, i, pick[i]))
                return false;
        }
        return true;
    }
    return place_best_n(room, n, size_at(a, 0, 0), a->n, pick) == (int)a->n;
}

static void withdraw(struct runplace_choice *c)
{
    for (unsigned i = 0; i < c->n; i++)
        if (c->group_path[i][0])
            unlink(c->group_path[i]);
    memset(c, 0, sizeof *c);
}

/* Publishes our slice on every GPU of pick, then checks again with them in
 * place: VRAM_OK (admitted), VRAM_EFAIL (no group file could be made), or
 * 1 (withdrawn, every slice removed: room is the room seen). */
static int publish(struct probe *p, struct snap *s, const struct ask *a, const unsigned *pick,
                   struct runplace_choice *out, struct tally *t, uint64_t *room, char *err,
                   size_t errlen)
{
    memset(out, 0, sizeof *out);
    for (unsigned i = 0; i < a->n; i++) {
        out->gpu[i] = pick[i];
        out->size[i] = size_at(a, i, pick[i]);
        out->n = i + 1;
        if (group_create(out->group_path[i], sizeof out->group_path[i],
                         out->size[i] ? out->size[i] : UINT64_MAX, pick[i], s->gpus[pick[i]].uuid,
                         clock_wall_ms()) < 0) {
            snprintf(err, errlen, "cannot create a group file in %s: %s", group_dir(),
                     strerror(errno));
            out->group_path[i][0] = '\0';
            withdraw(out);
            return VRAM_EFAIL;
        }
    }
    probe_sample(p, s, 0, clock_wall_ms());
    rooms(s, out, t, room);
    bool all = true;
    for (unsigned i = 0; i < out->n; i++)
        all = all && room[out->gpu[i]] >= out->size[i];
    struct group g[RUNPLACE_MAX];
    unsigned opened = 0;
    while (all && opened < out->n && group_open(&g[opened], out->group_path[opened]) == 0)
        opened++;
    if (all && opened == out->n) {
        for (unsigned i = 0; i < opened; i++) {
            group_set_state(&g[i], GROUP_ADMITTED);
            group_close(&g[i]);
        }
        return VRAM_OK;
    }
    for (unsigned i = 0; i < opened; i++)
        group_close(&g[i]);
    withdraw(out);
    return 1;
}

/* Why the job does not fit now, for the refusal and the waiting line.
 * hint: the option that makes a refused job wait ("--wait"), or NULL. */
static void why_not(const struct ask *a, const struct tally *t, const uint64_t *room, size_t n,
                    bool wait, const char *hint, char *err, size_t errlen)
{
    char b1[32], b2[32], who[200], add[96] = "";
    const char *verdict = wait ? "timed out waiting" : "no GPU has room";
    const char *until = a->n == 1 ? "one has" : a->forced ? "all have" : "they have";
    if (!wait && hint)
        snprintf(add, sizeof add, "; add %s to queue until %s", hint, until);
    if (a->n == 1) {
        size_t best = a->forced ? a->gpu[0] : 0;
        for (size_t i = 0; !a->forced && i < n; i++)
            if (room[i] > room[best])
                best = i;
        whose(t, best, who, sizeof who);
        snprintf(err, errlen, "%s: %s free for %s (GPU %zu has the most room: %s%s)%s", verdict,
                 units_fmt_size(size_at(a, 0, (unsigned)best), b1, sizeof b1),
                 a->forced ? "this GPU" : "any GPU", best,
                 units_fmt_size(room[best], b2, sizeof b2), who, add);
        return;
    }
    if (a->forced) { /* the first GPU asked for that is short */
        unsigned i = 0;
        char list[256] = "";
        for (unsigned k = 0, at = 0; k < a->n && at < sizeof list; k++)
            at += (unsigned)snprintf(list + at, sizeof list - at, "%s%u", k ? "," : "", a->gpu[k]);
        while (i + 1 < a->n && room[a->gpu[i]] >= size_at(a, i, a->gpu[i]))
            i++;
        whose(t, a->gpu[i], who, sizeof who);
        snprintf(err, errlen, "%s GPU %u of --gpus %s: %s of room for its %s slice%s%s",
                 wait ? "timed out waiting for room on" : "no room on", a->gpu[i], list,
                 units_fmt_size(room[a->gpu[i]], b1, sizeof b1),
                 units_fmt_size(size_at(a, i, a->gpu[i]), b2, sizeof b2), who, add);
        return;
    }
    /* the a->n-th most room is what falls short */
    unsigned pick[RUNPLACE_MAX];
    place_best_n(room, n, 0, a->n, pick);
    size_t worst = pick[0];
    for (unsigned i = 1; i < a->n; i++)
        if (room[pick[i]] < room[worst])
            worst = pick[i];
    whose(t, worst, who, sizeof who);
    snprintf(err, errlen,
             "%s: %s free on each of %u GPUs (of the %u with the most room, GPU %zu "
             "has the least: %s%s)%s",
             wait ? "timed out waiting" : "too few GPUs have room",
             units_fmt_size(size_at(a, 0, 0), b1, sizeof b1), a->n, a->n, worst,
             units_fmt_size(room[worst], b2, sizeof b2), who, add);
}

int runplace_pick(struct probe *p, struct snap *s, const struct gpuspec_gpus *gpus,
                  const struct gpuspec_sizes *sizes, const struct runplace_opts *o,
                  struct runplace_choice *out, char *err, size_t errlen)
{
    bool wait = o->wait, quiet = o->quiet;
    double timeout = o->timeout;
    memset(out, 0, sizeof *out);
    if (probe_sample(p, s, PROBE_ENERGY, clock_wall_ms()) < 0 || s->ngpus == 0) {
        snprintf(err, errlen, "no NVIDIA GPU found");
        return VRAM_EFAIL;
    }
    struct ask a;
    int rc = resolve_ask(s, gpus, sizes, &a, err, errlen);
    if (rc < 0)
        return rc;
    if (group_dir_check(err, errlen) < 0)
        return VRAM_EFAIL;
    if (a.n > 1 && strchr(group_dir(), ',')) {
        snprintf(err, errlen,
                 "%s holds a comma, which separates the group files of a job over several "
                 "GPUs; set VRAM_RUN_DIR to a folder without one",
                 group_dir());
        return VRAM_EFAIL;
    }
    uint64_t start = clock_mono_ms(), last_note = 0;
    struct tally t;
    for (bool first = true;; first = false) {
        if (!first)
            probe_sample(p, s, PROBE_ENERGY, clock_wall_ms());
        uint64_t room[MAX_GPUS] = {0};
        size_t n = s->ngpus < MAX_GPUS ? s->ngpus : MAX_GPUS;
        rooms(s, NULL, &t, room);
        unsigned pick[RUNPLACE_MAX];
        if (fits(&a, room, n, pick)) {
            rc = publish(p, s, &a, pick, out, &t, room, err, errlen);
            if (rc <= 0) {
                if (rc == VRAM_OK && !quiet && last_note)
                    fputc('\n', stderr);
                return rc;
            }
            bool contended = false;
            for (unsigned i = 0; i < a.n; i++)
                contended = contended || t.pending[pick[i]];
            if (contended && clock_mono_ms() - start < CONTEND_MS) {
                pause_randomly(); /* another job is deciding on these GPUs too */
                continue;
            }
        }
        double waited = (double)(clock_mono_ms() - start) / 1000;
        if (!wait || (timeout > 0 && waited >= timeout)) {
            why_not(&a, &t, room, n, wait, o->wait_option, err, errlen);
            return VRAM_EFAIL;
        }
        uint64_t now = clock_mono_ms();
        if (!quiet && now - last_note >= 1000) {
            char b1[32], b2[32];
            size_t best = a.forced ? a.gpu[0] : 0;
            for (size_t i = 0; !a.forced && i < n; i++)
                if (room[i] > room[best])
                    best = i;
            if (a.n == 1)
                fprintf(stderr, "\r%s: waiting %.0f s for %s free (best now: GPU %zu, %s)  ",
                        o->who, waited, units_fmt_size(size_at(&a, 0, (unsigned)best), b1, sizeof b1), best,
                        units_fmt_size(room[best], b2, sizeof b2));
            else
                fprintf(stderr, "\r%s: waiting %.0f s for room on %u GPUs  ", o->who, waited,
                        a.n);
            last_note = now;
        }
        struct timespec ts = {0, 250 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

void runplace_done(struct runplace_choice *c)
{
    withdraw(c);
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

static int add_once(uint32_t *list, int n, int max, uint32_t pid)
{
    for (int j = 0; j < n; j++)
        if (list[j] == pid)
            return n;
    if (n < max)
        list[n++] = pid;
    return n;
}

int runplace_leftovers(struct probe *p, struct snap *s, const struct runplace_choice *c, bool reap,
                       bool quiet)
{
    uint32_t cand[GROUP_MEMBERS + 256], held[GROUP_MEMBERS + 256];
    int n = 0;
    struct group_view *v = malloc(sizeof *v);
    /* a process on several GPUs is a member of each GPU's group: once here */
    for (unsigned g = 0; v && g < c->n; g++)
        if (group_read(c->group_path[g], v) == 0)
            for (unsigned i = 0; i < v->nmembers; i++)
                n = add_once(cand, n, GROUP_MEMBERS, (uint32_t)v->members[i].pid);
    free(v);
    /* an orphan that joined the group is both a member and our child */
    uint32_t kids[256];
    int nk = children(kids, 256);
    for (int i = 0; i < nk; i++)
        n = add_once(cand, n, GROUP_MEMBERS + 256, kids[i]);
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
