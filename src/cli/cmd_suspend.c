/* cmd_suspend: `vram suspend` and `vram resume`, the two halves of one move: a
 * process's GPU memory out to host RAM and back, by libvramcap's fast swap
 * when the process runs under it, else through the driver's checkpoints
 * (which can also bring it back on another GPU of the same kind). The
 * process stays alive and never notices, except that its CUDA calls wait
 * meanwhile. A small record in vram's run directory remembers the GPU it
 * left. */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/client.h"
#include "host/clock.h"
#include "cli/cmd.h"
#include "cli/progress.h"
#include "cli/suspendrec.h"
#include "core/err.h"
#include "core/modelname.h"
#include "core/units.h"
#include "park/ckpt.h"
#include "park/park.h"
#include "host/pidref.h"
#include "host/proc.h"
#include "probe/probe.h"

static int cmd_suspend(int argc, char **argv);
static int cmd_resume(int argc, char **argv);

const struct cmd_entry cmd_suspend_entry = {
    .name = "suspend",
    .args = "PID|MODEL [--timeout SECONDS] [--driver] [--socket PATH]",
    .summary = "move a process's GPU memory to host RAM; it stays alive, paused",
    .help = "  -t, --timeout S     how long to wait for its GPU work to finish (default 30)\n"
            "  -d, --driver        use the driver's checkpoint even if fast swap could\n"
            "  -s, --socket PATH   for a MODEL: vram serve's socket\n"
            "\n"
            "A MODEL is one of vram serve's (vram ps); a PID any CUDA process of yours\n"
            "(another user's only as root, as kill).\n"
            "A process started with `vram run --swap` (libvramcap, VRAM_SWAP=1) is moved\n"
            "by fast swap: pinned copies at PCIe speed, same addresses on return. Any\n"
            "other goes through the NVIDIA driver's process checkpoints (driver 570 or\n"
            "newer). The process keeps running on the CPU; its CUDA calls wait until\n"
            "vram resume.\n",
    .exec = cmd_suspend,
};

const struct cmd_entry cmd_resume_entry = {
    .name = "resume",
    .args = "PID|MODEL [--gpu N] [--socket PATH]",
    .summary = "bring a suspended process's memory back to a GPU",
    .help = "  -g, --gpu N         restore onto GPU N (same kind of GPU) instead of the one\n"
            "                      it left\n"
            "  -s, --socket PATH   for a MODEL: vram serve's socket\n",
    .exec = cmd_resume,
};

/* 1 for a pid (digits only), 0 for a model name (vram serve's: one may
 * begin with digits, "01-ai/Yi-6B"), or minus the bad-usage exit code. */
static int parse_pid(const struct cmd_entry *e, const char *s, int *pid)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!isdigit((unsigned char)*s) || *end)
        return 0;
    if (v <= 0 || v > 4194304)
        return -cmd_bad_usage(e, "'%s': a process id or a model name", s);
    *pid = (int)v;
    return 1;
}

/* The daemon's way: suspend or resume one of its models by name. */
static int by_name(const struct cmd_entry *e, const char *sock, const char *name, long gpu)
{
    char path[MODELNAME_MAX * 3 + 64], err[512];
    if (client_model_path(name, e->name, path, sizeof path, err, sizeof err) < 0) {
        fprintf(stderr, "vram %s: %s\n", e->name, err);
        return 2;
    }
    json_t *body = gpu >= 0 ? json_pack("{s:I}", "gpu", (json_int_t)gpu) : NULL, *r;
    struct progress pr;
    char what[160];
    snprintf(what, sizeof what, "%s %s", e == &cmd_suspend_entry ? "suspending" : "resuming", name);
    progress_start(&pr, what);
    long st = client_call(client_socket(sock), "POST", path, body, &r, err, sizeof err);
    progress_stop(&pr);
    json_decref(body);
    int rc = client_report(e->name, st, r, err);
    json_decref(r);
    return rc;
}

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

/* The driver's checkpoints are opened only when the fast path cannot do
 * the work (initializing CUDA here costs tens of milliseconds); they may be
 * missing (driver < 570): then *c is NULL and why says so. */
static int open_all(const struct cmd_entry *e, struct probe **p, struct ckpt **c, struct snap *s,
                    bool need_ckpt, char *why, size_t wlen)
{
    char err[512];
    int rc = probe_open(p, "/proc", err, sizeof err);
    if (rc < 0)
        return cmd_no_driver(e, err, rc);
    *c = NULL;
    snprintf(why, wlen, "not needed");
    if (need_ckpt && (rc = ckpt_open(c, why, wlen)) < 0) {
        if (rc == VRAM_ENODRIVER) {
            probe_close(*p);
            return cmd_no_driver(e, why, rc);
        }
        *c = NULL;
    }
    memset(s, 0, sizeof *s);
    probe_sample(*p, s, PROBE_PROCS, clock_wall_ms());
    return 0;
}

static void close_all(struct probe *p, struct ckpt *c, struct snap *s)
{
    snap_free(s);
    if (c)
        ckpt_close(c);
    probe_exiting(p);
    probe_close(p);
}

static int cmd_suspend(int argc, char **argv)
{
    static const struct option opts[] = {
        {"timeout", required_argument, NULL, 't'},
        {"driver", no_argument, NULL, 'd'},
        {"socket", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    double timeout = 30;
    const char *sock = NULL;
    bool driver = false;
    int c, pid = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "t:ds:h", opts, NULL)) != -1) {
        if (c == 'h') {
            cmd_usage(&cmd_suspend_entry, 0);
            return 0;
        }
        if (c == 'd') {
            driver = true;
            continue;
        }
        if (c == 's') {
            sock = optarg;
            continue;
        }
        if (c != 't' || units_parse_seconds(optarg, &timeout) < 0 || timeout > 3600)
            return cmd_bad_usage(&cmd_suspend_entry, c == 't' ? "--timeout: seconds" : NULL);
    }
    if (optind != argc - 1)
        return cmd_bad_usage(&cmd_suspend_entry, "which process or model?");
    if ((c = parse_pid(&cmd_suspend_entry, argv[optind], &pid)) < 0)
        return -c;
    if (c == 0)
        return by_name(&cmd_suspend_entry, sock, argv[optind], -1);
    struct pidref ref;
    char err[512];
    if (pidref_open(&ref, pid, err, sizeof err) < 0) {
        fprintf(stderr, "vram suspend: %s\n", err);
        return 1;
    }
    struct probe *p;
    struct ckpt *ck;
    struct snap s;
    char why[512];
    struct park_result pr = {0};
    bool fast = !driver && park_probe(pid, &pr) == PARK_FAST;
    if ((c = open_all(&cmd_suspend_entry, &p, &ck, &s, !fast, why, sizeof why))) {
        pidref_close(&ref);
        return c;
    }
    size_t g;
    uint64_t bytes;
    char b[32], l[32];
    int rc = 1;
    /* fast swap answers for its process even when NVML cannot see it
     * (held by the driver's checkpoint, say), and says what it can do */
    int found = find_proc(&s, pid, &g, &bytes);
    if (found < 0 && fast) {
        g = 0;
        bytes = 0;
    } else if (found < 0) {
        fprintf(stderr,
                "vram suspend: pid %d holds no GPU memory (not a CUDA process, or "
                "suspended already: vram resume %d)\n",
                pid, pid);
        goto out;
    }
    char uuid[96];
    snprintf(uuid, sizeof uuid, "%s", s.gpus[g].uuid);
    if (!pidref_same(&ref)) {
        fprintf(stderr, "vram suspend: pid %d exited\n", pid);
        goto out;
    }
    uint64_t t0 = clock_mono_ms();
    struct progress bar;
    char what[64];
    snprintf(what, sizeof what, "suspending pid %d", pid);
    progress_start(&bar, what);
    int moved = park_suspend(ck, why, pid, (unsigned)(timeout * 1000), driver, NULL, &pr,
                             err, sizeof err);
    progress_stop(&bar);
    if (moved < 0) {
        fprintf(stderr, "vram suspend: %s\n", err);
        goto out;
    }
    uint64_t t1 = clock_mono_ms();
    struct suspendrec rec = {.start = hostproc_start_ticks((uint32_t)pid), .bytes = bytes};
    snprintf(rec.uuid, sizeof rec.uuid, "%s", uuid);
    char rerr[512];
    if (suspendrec_write(pid, &rec, rerr, sizeof rerr) < 0)
        fprintf(stderr, "vram suspend: %s: vram resume --gpu will not know the GPU it left\n",
                rerr);
    probe_sample(p, &s, PROBE_PROCS, clock_wall_ms());
    size_t g2;
    uint64_t left = 0;
    find_proc(&s, pid, &g2, &left);
    printf("suspended pid %d (%s path) in %.2f s: it held %s on GPU %zu, now %s\n", pid,
           park_path_name(pr.path), (double)(t1 - t0) / 1000, units_fmt_size(bytes, b, sizeof b), g,
           units_fmt_size(left, l, sizeof l));
    if (pr.path == PARK_FAST)
        printf("  fast swap: %u allocations, %s moved out in %.3f s (each released as soon as "
               "it was copied); waiting for its work %.3f s, host pool grown %.3f s\n",
               pr.fast.allocations, units_fmt_size(pr.fast.bytes, b, sizeof b),
               (double)pr.fast.copy_ms / 1000, (double)(pr.fast.gate_ms + pr.fast.sync_ms) / 1000,
               (double)pr.fast.pool_ms / 1000);
    else
        printf("  %s\n", pr.note);
    rc = 0;
out:
    close_all(p, ck, &s);
    pidref_close(&ref);
    return rc;
}

static int cmd_resume(int argc, char **argv)
{
    static const struct option opts[] = {
        {"gpu", required_argument, NULL, 'g'},
        {"socket", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    long gpu = -1;
    const char *sock = NULL;
    int c, pid = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "g:s:h", opts, NULL)) != -1) {
        char *end;
        if (c == 'h') {
            cmd_usage(&cmd_resume_entry, 0);
            return 0;
        }
        if (c == 's') {
            sock = optarg;
            continue;
        }
        if (c != 'g' || (gpu = strtol(optarg, &end, 10)) < 0 || *end || !*optarg)
            return cmd_bad_usage(&cmd_resume_entry, c == 'g' ? "--gpu: a GPU index" : NULL);
    }
    if (optind != argc - 1)
        return cmd_bad_usage(&cmd_resume_entry, "which process or model?");
    if ((c = parse_pid(&cmd_resume_entry, argv[optind], &pid)) < 0)
        return -c;
    if (c == 0)
        return by_name(&cmd_resume_entry, sock, argv[optind], gpu);
    struct pidref ref;
    char err[512];
    if (pidref_open(&ref, pid, err, sizeof err) < 0) {
        fprintf(stderr, "vram resume: %s\n", err);
        return 1;
    }
    struct probe *p;
    struct ckpt *ck;
    struct snap s;
    char why[512];
    struct park_result pr;
    park_probe(pid, &pr);
    bool fast = strcmp(pr.fast.state, "suspended") == 0;
    if ((c = open_all(&cmd_resume_entry, &p, &ck, &s, !fast, why, sizeof why))) {
        pidref_close(&ref);
        return c;
    }
    int rc = 1;
    char from[96] = "", b[32];
    unsigned long long bytes = 0;
    struct suspendrec rec;
    /* a record of another process that had this pid is stale */
    if (suspendrec_read(pid, &rec) == 0 && rec.start == hostproc_start_ticks((uint32_t)pid)) {
        snprintf(from, sizeof from, "%s", rec.uuid);
        bytes = rec.bytes;
    }
    if (gpu >= (long)s.ngpus) {
        fprintf(stderr, "vram resume: --gpu %ld: this machine has %zu GPU%s\n", gpu, s.ngpus,
                s.ngpus == 1 ? "" : "s");
        goto out;
    }
    if (gpu >= 0 && !from[0]) {
        fprintf(stderr,
                "vram resume: pid %d was not suspended by vram suspend, so the GPU it "
                "left is unknown: resume it in place (without --gpu)\n",
                pid);
        goto out;
    }
    const char *to = gpu >= 0 ? s.gpus[gpu].uuid : NULL;
    if (!pidref_same(&ref)) {
        fprintf(stderr, "vram resume: pid %d exited\n", pid);
        goto out;
    }
    uint64_t t0 = clock_mono_ms();
    struct progress bar;
    char what[64];
    snprintf(what, sizeof what, "resuming pid %d", pid);
    progress_start(&bar, what);
    int moved = park_resume(ck, why, pid, to ? from : NULL, to, NULL, &pr, err, sizeof err);
    progress_stop(&bar);
    if (moved < 0) {
        fprintf(stderr, "vram resume: %s%s\n", err, pr.not_suspended ? "" : "; it stays suspended");
        goto out;
    }
    uint64_t t1 = clock_mono_ms();
    suspendrec_remove(pid);
    probe_sample(p, &s, PROBE_PROCS, clock_wall_ms());
    size_t g = 0;
    uint64_t now_bytes = bytes;
    find_proc(&s, pid, &g, &now_bytes);
    printf("resumed pid %d on GPU %zu (%s path): %s back in %.2f s\n", pid, g,
           park_path_name(pr.path), units_fmt_size(now_bytes, b, sizeof b),
           (double)(t1 - t0) / 1000);
    if (pr.path == PARK_FAST)
        printf("  fast swap: %u allocations, %s made, mapped and copied back in %.3f s\n",
               pr.fast.allocations, units_fmt_size(pr.fast.bytes, b, sizeof b),
               (double)pr.fast.copy_ms / 1000);
    rc = 0;
out:
    close_all(p, ck, &s);
    pidref_close(&ref);
    return rc;
}
