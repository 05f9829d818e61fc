/* runplace: where `vram run` puts a job, and what it leaves behind.
 *
 * Admission: a slice is a promise. A GPU's room is its free memory less what
 * the other live slices on it have not allocated yet, so two jobs started
 * at the same moment cannot both count the same free bytes. Choices are
 * made one at a time under a lock file, held until the chosen job's group
 * file exists. Group files of jobs whose `vram run` died are removed on the
 * way, so a crash never leaves a promise that blocks the GPU. */
#include "cli/runplace.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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

struct promised {
    unsigned gpu;
    uint64_t sum;
};

static int add_promise(const char *path, void *arg)
{
    struct promised *pr = arg;
    struct group_view v;
    if (group_read(path, &v) < 0)
        return 0;
    bool creator_alive = v.creator > 0 && (kill(v.creator, 0) == 0 || errno == EPERM);
    if (!creator_alive) {
        if (v.nmembers == 0)
            unlink(path); /* a `vram run` that died: its promise is void */
        return 0;
    }
    if (v.gpu_index == pr->gpu && v.cap != UINT64_MAX)
        pr->sum += v.cap > v.used ? v.cap - v.used : 0;
    return 0;
}

static uint64_t promised_on(unsigned gpu)
{
    struct promised pr = {gpu, 0};
    group_each(add_promise, &pr);
    return pr.sum;
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

int runplace_pick(struct probe *p, struct snap *s, const char *gpu, uint64_t size, bool wait,
                  double timeout, bool quiet, struct runplace_choice *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->lock_fd = -1;
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
    char lock_path[300];
    snprintf(lock_path, sizeof lock_path, "%s/vram-run.lock", group_dir());
    int lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (lock >= 0)
        fchmod(lock, 0666); /* one line for every user's jobs */
    uint64_t start = clock_mono_ms(), last_note = 0;
    char b1[32], b2[32];
    for (;;) {
        if (lock >= 0)
            flock(lock, LOCK_EX);
        probe_sample(p, s, PROBE_ENERGY, clock_wall_ms());
        uint64_t room[64] = {0};
        size_t n = s->ngpus < 64 ? s->ngpus : 64;
        for (size_t i = 0; i < n; i++)
            room[i] = place_room(s->gpus[i].mem.free, promised_on((unsigned)i));
        int pick;
        if (forced >= 0)
            pick = room[forced] >= size ? forced : -1;
        else
            pick = place_best(room, n, size);
        if (pick >= 0) {
            snprintf(out->group_path, sizeof out->group_path, "%s/%s%d-%08lx", group_dir(),
                     GROUP_PREFIX, (int)getpid(), (unsigned long)(clock_wall_ms() & 0xffffffff));
            if (group_create(out->group_path, size ? size : UINT64_MAX, (unsigned)pick,
                             s->gpus[pick].uuid, clock_wall_ms()) < 0) {
                snprintf(err, errlen, "cannot create %s: %s", out->group_path, strerror(errno));
                if (lock >= 0)
                    close(lock);
                return VRAM_EFAIL;
            }
            out->gpu = (unsigned)pick;
            out->lock_fd = lock;
            if (!quiet && last_note)
                fputc('\n', stderr);
            return VRAM_OK;
        }
        if (lock >= 0)
            flock(lock, LOCK_UN);
        size_t best = forced >= 0 ? (size_t)forced : 0;
        for (size_t i = 0; forced < 0 && i < n; i++)
            if (room[i] > room[best])
                best = i;
        double waited = (double)(clock_mono_ms() - start) / 1000;
        if (!wait || (timeout > 0 && waited >= timeout)) {
            snprintf(err, errlen, "%s: %s free for %s (GPU %zu has the most room: %s)%s",
                     wait ? "timed out waiting" : "no GPU has room",
                     units_fmt_size(size, b1, sizeof b1), forced >= 0 ? "this GPU" : "any GPU",
                     best, units_fmt_size(room[best], b2, sizeof b2),
                     wait ? "" : "; add --wait to queue until one has");
            if (lock >= 0)
                close(lock);
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

void runplace_admitted(struct runplace_choice *c)
{
    if (c->lock_fd >= 0)
        close(c->lock_fd);
    c->lock_fd = -1;
}

void runplace_done(struct runplace_choice *c)
{
    runplace_admitted(c);
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
