/* move: the choice between the two paths. The fast one is asked first
 * ("info"): it answers only inside a process under libvramcap with fast
 * swap on, and says why when it cannot move everything (managed memory,
 * memory pools, IPC...); then the driver's checkpoint does the work. */
#include "move/move.h"

#include <stdio.h>
#include <string.h>

const char *move_path_name(enum move_path p)
{
    return p == MOVE_FAST ? "fast" : p == MOVE_DRIVER ? "driver" : "-";
}

enum move_path move_probe(int pid, struct move_result *r)
{
    char err[240];
    memset(r, 0, sizeof *r);
    int rc = swapctl_call(pid, "info", 5000, &r->fast, err, sizeof err);
    if (rc == 1 && !r->fast.why[0])
        return r->path = MOVE_FAST;
    if (rc == 1)
        snprintf(r->note, sizeof r->note, "fast swap cannot move it: %s", r->fast.why);
    else if (rc < 0)
        snprintf(r->note, sizeof r->note, "fast swap did not answer: %s", err);
    else
        snprintf(r->note, sizeof r->note, "not running under libvramcap with VRAM_SWAP=1");
    return r->path = MOVE_DRIVER;
}

int move_suspend(struct ckpt *c, const char *ckpt_why, int pid, unsigned timeout_ms,
                 bool driver_only, const struct move_fast *f, struct move_result *r, char *err,
                 size_t len)
{
    if (f && f->fast_only && !driver_only &&
        (r->path != MOVE_NONE ? r->path : move_probe(pid, r)) != MOVE_FAST) {
        snprintf(err, len, "%s; a suspend mid-request takes fast swap only", r->note);
        return -1;
    }
    if (driver_only) {
        memset(r, 0, sizeof *r);
        r->path = MOVE_DRIVER;
        snprintf(r->note, sizeof r->note, "the driver's checkpoint was asked for");
    } else if ((r->path != MOVE_NONE ? r->path : move_probe(pid, r)) == MOVE_FAST) {
        char req[64];
        bool file = f && f->spill_fd >= 0 && f->spill_max;
        struct swapline_req q = {
            .verb = SWAPLINE_SUSPEND, .timeout_ms = timeout_ms, .spill = file ? f->spill_max : 0};
        swapline_format_request(&q, req, sizeof req);
        /* the pool may have to grow first: allow for pinning at ~1 GiB/s,
         * and for a disk at 100 MB/s */
        unsigned wait = timeout_ms + 60000 + (unsigned)(r->fast.bytes >> 20) +
                        (file ? (unsigned)(r->fast.bytes / 100000) : 0);
        int fds[SWAPLINE_MAX_CHUNKS];
        unsigned n = f ? f->nfds : 0;
        if (n > SWAPLINE_MAX_CHUNKS - (file ? 1 : 0))
            n = SWAPLINE_MAX_CHUNKS - (file ? 1 : 0);
        if (n)
            memcpy(fds, f->fds, n * sizeof fds[0]);
        if (file)
            fds[n++] = f->spill_fd;
        return swapctl_call_fds(pid, req, fds, n, wait, &r->fast, err, len) == 1 ? 0 : -1;
    }
    if (!c) {
        snprintf(err, len, "%s; and %s", r->note, ckpt_why ? ckpt_why : "no driver checkpoints");
        return -1;
    }
    return ckpt_suspend(c, pid, timeout_ms, err, len);
}

int move_prepare(int pid, const int *fds, unsigned n, uint64_t *pin_ms, char *err, size_t len)
{
    struct swapline_info in = {0};
    /* pinning faults in what the daemon did not populate: ~1 GiB/s at worst */
    unsigned wait = 60000 + n * 4000;
    int rc = swapctl_call_fds(pid, "prepare", fds, n, wait, &in, err, len);
    if (rc == 0)
        snprintf(err, len, "pid %d has no fast swap", pid);
    *pin_ms = in.pool_ms;
    return rc == 1 ? 0 : -1;
}

int move_drop(int pid, char *err, size_t len)
{
    struct swapline_info in;
    int rc = swapctl_call(pid, "drop", 30000, &in, err, len);
    if (rc == 0)
        snprintf(err, len, "pid %d has no fast swap", pid);
    return rc == 1 ? 0 : -1;
}

int move_spill(int pid, int fd, uint64_t max, uint64_t bytes, struct swapline_info *in, char *err,
               size_t len)
{
    char req[64];
    struct swapline_req q = {
        .verb = SWAPLINE_SPILL, .spill = fd >= 0 ? max : 0, .spill_bytes = bytes};
    swapline_format_request(&q, req, sizeof req);
    memset(in, 0, sizeof *in);
    /* a disk at 100 MB/s at worst, for what it may write */
    unsigned wait = 60000 + (unsigned)((max ? max : (64ULL << 30)) / 100000);
    int rc = swapctl_call_fds(pid, req, fd >= 0 ? &fd : NULL, fd >= 0 ? 1 : 0, wait, in, err, len);
    if (rc == 0)
        snprintf(err, len, "pid %d has no fast swap", pid);
    return rc == 1 ? 0 : -1;
}

int move_resume(struct ckpt *c, const char *ckpt_why, int pid, const char *from_uuid,
                const char *to_uuid, const struct move_fast *f, struct move_result *r, char *err,
                size_t len)
{
    char e[240];
    if (r->path == MOVE_NONE)
        move_probe(pid, r);
    if (strcmp(r->fast.state, "suspended") == 0) {
        r->path = MOVE_FAST;
        if (to_uuid && from_uuid && strcmp(to_uuid, from_uuid) != 0) {
            snprintf(err, len,
                     "pid %d was suspended by fast swap, which resumes on the GPU it left; "
                     "resume it there (without --gpu)",
                     pid);
            return -1;
        }
        char req[64];
        struct swapline_req q = {
            .verb = SWAPLINE_RESUME, .floor = f ? f->floor : 0, .keep = f && f->keep};
        swapline_format_request(&q, req, sizeof req);
        /* an overlapped resume may wait up to two minutes for its room;
         * one from disk reads at 100 MB/s at worst */
        return swapctl_call(pid, req, 250000 + (unsigned)(r->fast.disk / 100000), &r->fast, err,
                            len) == 1
                   ? 0
                   : -1;
    }
    r->path = MOVE_DRIVER;
    r->not_suspended = false;
    if (!c) {
        /* without the driver's checkpoints nothing here can have suspended it */
        r->not_suspended = true;
        snprintf(err, len, "pid %d is not suspended: fast swap does not hold it, and %s", pid,
                 ckpt_why ? ckpt_why : "no driver checkpoints");
        return -1;
    }
    int st = ckpt_state(c, pid, e, sizeof e);
    if (st == CKPT_RUNNING) {
        r->not_suspended = true;
        snprintf(err, len, "pid %d is not suspended, so there is nothing to resume", pid);
        return -1;
    }
    if (st < 0) {
        /* the driver knows no such process: nothing of it is held */
        r->not_suspended = true;
        snprintf(err, len, "%s", e);
        return -1;
    }
    return ckpt_resume(c, pid, from_uuid, to_uuid, err, len);
}
