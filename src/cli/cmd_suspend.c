/* cmd_suspend: `vram suspend` and `vram resume`, the two halves of one move: a
 * process's GPU memory out to host RAM and back, by libvramcap's fast swap
 * when the process runs under it, else through the driver's checkpoints
 * (which can also bring it back on another GPU of the same kind). The
 * process stays alive and never notices, except that its CUDA calls wait
 * meanwhile. A small record in vram's run directory remembers the GPU it
 * left. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/clock.h"
#include "cli/cmd.h"
#include "cli/progress.h"
#include "cli/suspendrec.h"
#include "cli/target.h"
#include "core/err.h"
#include "core/units.h"
#include "move/ckpt.h"
#include "move/move.h"
#include "host/pidref.h"
#include "host/proc.h"
#include "probe/probe.h"

struct suspend_opts {
    double timeout;
    bool driver;
    long gpu; /* resume: < 0 where it was */
    const char *socket;
};

static int cmd_suspend(const void *opts, int argc, char **argv);
static int cmd_resume(const void *opts, int argc, char **argv);

#define O struct suspend_opts
static const struct cmd_opt suspend_opts[] = {
    {"timeout", 't', CMD_SECONDS(O, timeout, 0, 3600), .arg = "SECONDS",
     .fix = "seconds from 0 to 3600, like 30 or 2m",
     .help = "how long to wait for its GPU work to finish (default 30)"},
    {"driver", 'd', CMD_FLAG(O, driver),
     .help = "use the driver's checkpoint even if fast swap could"},
    CMD_SOCKET_OPT(O, "for a MODEL: vram serve's socket"),
    {NULL},
};
static const struct cmd_opt resume_opts[] = {
    {"gpu", 'g', CMD_NUMBER(O, gpu, 0, 1023), .arg = "N", .fix = "a GPU index: 0, 1, ...",
     .help = "restore onto GPU N (same kind of GPU) instead of the one it left"},
    CMD_SOCKET_OPT(O, "for a MODEL: vram serve's socket"),
    {NULL},
};
#undef O

static const struct suspend_opts suspend_defaults = {.timeout = 30, .gpu = -1};

const struct cmd_entry cmd_suspend_entry = {
    .name = "suspend",
    .args = "PID|MODEL [--timeout SECONDS] [--driver] [--socket PATH]",
    .summary = "move a process's GPU memory to host RAM; it stays alive, paused",
    .opts = suspend_opts,
    .help = "A MODEL is one of vram serve's (vram ps); a PID any CUDA process of yours\n"
            "(another user's only as root, as kill).\n"
            "A process started with `vram run --swap` (libvramcap, VRAM_SWAP=1) is moved\n"
            "by fast swap: pinned copies at PCIe speed, same addresses on return. Any\n"
            "other goes through the NVIDIA driver's process checkpoints (driver 570 or\n"
            "newer). The process keeps running on the CPU; its CUDA calls wait until\n"
            "vram resume.\n",
    .size = sizeof(struct suspend_opts),
    .defaults = &suspend_defaults,
    .max_operands = 1,
    .exec = cmd_suspend,
};

const struct cmd_entry cmd_resume_entry = {
    .name = "resume",
    .args = "PID|MODEL [--gpu N] [--socket PATH]",
    .summary = "bring a suspended process's memory back to a GPU",
    .opts = resume_opts,
    .size = sizeof(struct suspend_opts),
    .defaults = &suspend_defaults,
    .max_operands = 1,
    .exec = cmd_resume,
};

/* One process being suspended or resumed, and what that needs open. */
struct job {
    const struct cmd_entry *e;
    int pid;
    struct pidref ref; /* held throughout: a pid reused meanwhile is never moved */
    struct probe *p;
    struct ckpt *ck;   /* NULL: not needed, or missing (why says) */
    struct snap s;
    char why[512];
    struct move_result pr;
};

/* Where pid's memory is: the GPU and the bytes, from one snapshot. */
static int find_proc(struct snap *s, int pid, size_t *gpu, uint64_t *bytes)
{
    for (size_t g = 0; g < s->ngpus; g++)
        for (size_t i = 0; i < s->gpus[g].nprocs; i++)
            if (s->gpus[g].procs[i].pid == (uint32_t)pid) {
                *gpu = g;
                *bytes = s->gpus[g].procs[i].used;
                return 0;
            }
    return -1;
}

static int job_hold(struct job *j, const struct cmd_entry *e, int pid)
{
    memset(j, 0, sizeof *j);
    j->e = e;
    j->pid = pid;
    char err[512];
    if (pidref_open(&j->ref, pid, err, sizeof err) < 0) {
        fprintf(stderr, "vram %s: %s\n", e->name, err);
        return 1;
    }
    return 0;
}

/* The driver's checkpoints are opened only when the fast path cannot do
 * the work (initializing CUDA here costs tens of milliseconds); they may be
 * missing (driver < 570): then ck is NULL and why says so. 0, or the exit
 * code (the job let go). */
static int job_open(struct job *j, bool need_ckpt)
{
    char err[512];
    int rc = probe_open(&j->p, "/proc", err, sizeof err);
    if (rc < 0) {
        pidref_close(&j->ref);
        return cmd_no_driver(j->e, err, rc);
    }
    snprintf(j->why, sizeof j->why, "not needed");
    if (need_ckpt && (rc = ckpt_open(&j->ck, j->why, sizeof j->why)) < 0) {
        j->ck = NULL;
        if (rc == VRAM_ENODRIVER) {
            probe_close(j->p);
            pidref_close(&j->ref);
            return cmd_no_driver(j->e, j->why, rc);
        }
    }
    probe_sample(j->p, &j->s, PROBE_PROCS, clock_wall_ms());
    return 0;
}

static void job_close(struct job *j)
{
    snap_free(&j->s);
    if (j->ck)
        ckpt_close(j->ck);
    probe_exiting(j->p);
    probe_close(j->p);
    pidref_close(&j->ref);
}

/* The process is still the one named: 0, or 1 said. */
static int job_same(const struct job *j)
{
    if (pidref_same(&j->ref))
        return 0;
    fprintf(stderr, "vram %s: pid %d exited\n", j->e->name, j->pid);
    return 1;
}

/* ---- suspend ---- */

/* The GPU the process leaves and what it holds there; fast swap answers
 * for its process even when NVML cannot see it (held by the driver's
 * checkpoint, say). 0, or 1 said. */
static int suspend_where(struct job *j, bool fast, size_t *g, uint64_t *bytes)
{
    if (find_proc(&j->s, j->pid, g, bytes) == 0)
        return 0;
    if (fast) {
        *g = 0;
        *bytes = 0;
        return 0;
    }
    fprintf(stderr,
            "vram suspend: pid %d holds no GPU memory (not a CUDA process, or suspended "
            "already: vram resume %d)\n",
            j->pid, j->pid);
    return 1;
}

/* The record vram resume --gpu reads: the GPU it left. */
static void suspend_record(const struct job *j, size_t g, uint64_t bytes)
{
    struct suspendrec rec = {.start = hostproc_start_ticks((uint32_t)j->pid), .bytes = bytes};
    snprintf(rec.uuid, sizeof rec.uuid, "%s", g < j->s.ngpus ? j->s.gpus[g].uuid : "");
    char err[512];
    if (suspendrec_write(j->pid, &rec, err, sizeof err) < 0)
        fprintf(stderr, "vram suspend: %s: vram resume --gpu will not know the GPU it left\n",
                err);
}

static void suspend_say(struct job *j, size_t g, uint64_t bytes, uint64_t ms)
{
    probe_sample(j->p, &j->s, PROBE_PROCS, clock_wall_ms());
    size_t g2;
    uint64_t left = 0;
    find_proc(&j->s, j->pid, &g2, &left);
    const struct move_result *pr = &j->pr;
    char b[32], l[32];
    printf("suspended pid %d (%s path) in %.2f s: it held %s on GPU %zu, now %s\n", j->pid,
           move_path_name(pr->path), (double)ms / 1000, units_fmt_size(bytes, b, sizeof b), g,
           units_fmt_size(left, l, sizeof l));
    if (pr->path == MOVE_FAST)
        printf("  fast swap: %u allocations, %s moved out in %.3f s (each released as soon as "
               "it was copied); waiting for its work %.3f s, host pool grown %.3f s\n",
               pr->fast.allocations, units_fmt_size(pr->fast.bytes, b, sizeof b),
               (double)pr->fast.copy_ms / 1000, (double)(pr->fast.gate_ms + pr->fast.sync_ms) / 1000,
               (double)pr->fast.pool_ms / 1000);
    else
        printf("  %s\n", pr->note);
}

static int suspend_pid(const struct suspend_opts *o, int pid)
{
    struct job j;
    int rc = job_hold(&j, &cmd_suspend_entry, pid);
    if (rc)
        return rc;
    bool fast = !o->driver && move_probe(pid, &j.pr) == MOVE_FAST;
    if ((rc = job_open(&j, !fast)))
        return rc;
    size_t g;
    uint64_t bytes;
    if ((rc = suspend_where(&j, fast, &g, &bytes)) || (rc = job_same(&j)))
        goto out;
    uint64_t t0 = clock_mono_ms();
    struct progress bar;
    char what[64], err[512];
    snprintf(what, sizeof what, "suspending pid %d", pid);
    progress_start(&bar, what);
    int moved = move_suspend(j.ck, j.why, pid, (unsigned)(o->timeout * 1000), o->driver, NULL,
                             &j.pr, err, sizeof err);
    progress_stop(&bar);
    if (moved < 0) {
        fprintf(stderr, "vram suspend: %s\n", err);
        rc = 1;
        goto out;
    }
    uint64_t ms = clock_mono_ms() - t0;
    suspend_record(&j, g, bytes);
    suspend_say(&j, g, bytes, ms);
out:
    job_close(&j);
    return rc;
}

static int cmd_suspend(const void *opts, int argc, char **argv)
{
    const struct suspend_opts *o = opts;
    int pid = 0, c;
    if (argc != 1)
        return cmd_bad_usage(&cmd_suspend_entry, "which process or model?");
    if ((c = target_parse(&cmd_suspend_entry, argv[0], &pid)) < 0)
        return -c;
    if (c == 0)
        return target_model(&cmd_suspend_entry, o->socket, argv[0], NULL, "suspending");
    return suspend_pid(o, pid);
}

/* ---- resume ---- */

/* The GPU it is to go to (NULL: where it was) and the one it left, from
 * vram suspend's record (a record of another process that had this pid
 * is stale). 0, or 1 said. */
static int resume_where(struct job *j, long gpu, const char **to, char *from, size_t len,
                        uint64_t *bytes)
{
    struct suspendrec rec;
    if (suspendrec_read(j->pid, &rec) == 0 &&
        rec.start == hostproc_start_ticks((uint32_t)j->pid)) {
        snprintf(from, len, "%s", rec.uuid);
        *bytes = rec.bytes;
    }
    if (gpu >= (long)j->s.ngpus) {
        fprintf(stderr, "vram resume: --gpu %ld: this machine has %zu GPU%s\n", gpu, j->s.ngpus,
                j->s.ngpus == 1 ? "" : "s");
        return 1;
    }
    if (gpu >= 0 && !from[0]) {
        fprintf(stderr,
                "vram resume: pid %d was not suspended by vram suspend, so the GPU it left is "
                "unknown: resume it in place (without --gpu)\n",
                j->pid);
        return 1;
    }
    *to = gpu >= 0 ? j->s.gpus[gpu].uuid : NULL;
    return 0;
}

static void resume_say(struct job *j, uint64_t bytes, uint64_t ms)
{
    probe_sample(j->p, &j->s, PROBE_PROCS, clock_wall_ms());
    size_t g = 0;
    uint64_t now_bytes = bytes;
    find_proc(&j->s, j->pid, &g, &now_bytes);
    const struct move_result *pr = &j->pr;
    char b[32];
    printf("resumed pid %d on GPU %zu (%s path): %s back in %.2f s\n", j->pid, g,
           move_path_name(pr->path), units_fmt_size(now_bytes, b, sizeof b), (double)ms / 1000);
    if (pr->path == MOVE_FAST)
        printf("  fast swap: %u allocations, %s made, mapped and copied back in %.3f s\n",
               pr->fast.allocations, units_fmt_size(pr->fast.bytes, b, sizeof b),
               (double)pr->fast.copy_ms / 1000);
}

static int resume_pid(const struct suspend_opts *o, int pid)
{
    struct job j;
    int rc = job_hold(&j, &cmd_resume_entry, pid);
    if (rc)
        return rc;
    move_probe(pid, &j.pr);
    bool fast = strcmp(j.pr.fast.state, "suspended") == 0;
    if ((rc = job_open(&j, !fast)))
        return rc;
    char from[96] = "", err[512];
    const char *to = NULL;
    uint64_t bytes = 0;
    if ((rc = resume_where(&j, o->gpu, &to, from, sizeof from, &bytes)) || (rc = job_same(&j)))
        goto out;
    uint64_t t0 = clock_mono_ms();
    struct progress bar;
    char what[64];
    snprintf(what, sizeof what, "resuming pid %d", pid);
    progress_start(&bar, what);
    int moved = move_resume(j.ck, j.why, pid, to ? from : NULL, to, NULL, &j.pr, err, sizeof err);
    progress_stop(&bar);
    if (moved < 0) {
        fprintf(stderr, "vram resume: %s%s\n", err,
                j.pr.not_suspended ? "" : "; it stays suspended");
        rc = 1;
        goto out;
    }
    uint64_t ms = clock_mono_ms() - t0;
    suspendrec_remove(pid);
    resume_say(&j, bytes, ms);
out:
    job_close(&j);
    return rc;
}

static int cmd_resume(const void *opts, int argc, char **argv)
{
    const struct suspend_opts *o = opts;
    int pid = 0, c;
    if (argc != 1)
        return cmd_bad_usage(&cmd_resume_entry, "which process or model?");
    if ((c = target_parse(&cmd_resume_entry, argv[0], &pid)) < 0)
        return -c;
    if (c == 1)
        return resume_pid(o, pid);
    json_t *body = o->gpu >= 0 ? json_pack("{s:I}", "gpu", (json_int_t)o->gpu) : NULL;
    int rc = target_model(&cmd_resume_entry, o->socket, argv[0], body, "resuming");
    json_decref(body);
    return rc;
}
