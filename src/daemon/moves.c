/* moves: a model's memory going to host RAM and back (suspend, resume,
 * preemption): which of its processes hold memory, the chunks of host
 * memory it is given (daemon/hostpool.h), the worker's job (move.c picks
 * the path for each process: all of them move, or none), and what the
 * job's report changes. Also readies host memory ahead: the model a switch
 * would move out next is given its chunks to pin before it is asked to go,
 * so that its suspend is only copies. The scheduler decides; this carries
 * it out. */
#include "daemon/moves.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app/log.h"
#include "core/schedwhen.h"
#include "core/units.h"
#include "daemon/disktier.h"
#include "daemon/emit.h"
#include "daemon/hostpool.h"
#include "daemon/mgroup.h"
#include "daemon/movedown.h"
#include "host/meminfo.h"
#include "move/move.h"

/* A prepared model that has not been the next to go for this long gives
 * its chunks back (a shorter wait churns pinning as requests come in). */
#define UNPREDICTED_MS 2000

/* A model is readied while it is idle, this much at a time: pinning runs
 * in its own process and holds up its work there (on an H200, 11 GiB
 * pinned back to back stretched a 0.3 s generation running beside it by
 * 0.55 s: bench/gpu/pin_probe.py); a request that comes meanwhile waits
 * for one step at most, and so does a suspend. */
#define PREPARE_STEP (512ULL << 20)

/* The processes of model i that hold GPU memory, from the last snapshot
 * (its server alone, when it shows none yet). */
static void moving_pids(struct daemon *d, unsigned i)
{
    struct dmodel *dm = &d->dm[i];
    dm->nmoving = 0;
    for (size_t g = 0; g < d->snap.ngpus; g++)
        for (size_t k = 0; k < d->snap.gpus[g].nprocs; k++) {
            const struct snap_proc *p = &d->snap.gpus[g].procs[k];
            if (daemon_model_of_pid(d, p->pid) != (int)i)
                continue;
            unsigned at = 0;
            while (at < dm->nmoving && dm->moving[at] != (pid_t)p->pid)
                at++;
            if (at == dm->nmoving) {
                if (at == sizeof dm->moving / sizeof dm->moving[0])
                    continue;
                dm->moving[at] = (pid_t)p->pid;
                dm->moving_bytes[at] = 0;
                dm->nmoving++;
            }
            dm->moving_bytes[at] += p->used;
        }
    if (!dm->nmoving) {
        dm->moving[0] = dm->pid;
        dm->moving_bytes[0] = dm->host_bytes;
        dm->nmoving = 1;
    }
}

/* What model i's host memory should hold: a little over what its last
 * fast swap moved (a model that grew by a few buffers still fits; what it
 * does not use goes back), else what it holds on the GPU. */
static uint64_t share(const struct daemon *d, unsigned i)
{
    const struct dmodel *dm = &d->dm[i];
    uint64_t gpu = d->smodels[i].need > dm->host_bytes ? d->smodels[i].need : dm->host_bytes;
    return dm->moved ? dm->moved + dm->moved / 32 : gpu;
}

static bool swappable(const struct daemon *d, unsigned i)
{
    const struct dmodel *dm = &d->dm[i];
    return d->pool && dm->cfg.fast && dm->cfg.evict == SCHED_EVICT_SUSPEND && !dm->removed &&
           strcmp(dm->how, "checkpoint") != 0;
}

/* Whether model i, resuming, keeps its chunks pinned for its next suspend:
 * while others are out on a contended GPU a switch will come again, and
 * its chunks are ready now (giving them back and readying others costs
 * the machine seconds of page zeroing and pinning). */
static bool keeps(const struct daemon *d, unsigned i)
{
    const struct sched_model *m = &d->smodels[i];
    if (!swappable(d, i) || d->dm[i].nmoving > 1)
        return false;
    bool contended = false, others_out = false;
    for (size_t g = 0; g < d->sched.ngpus; g++)
        contended |= (m->gpus & (1u << g)) && schedwhen_contended(&d->sched, (int)g);
    for (size_t k = 0; k < d->sched.nmodels; k++) {
        enum sched_state st = d->smodels[k].state;
        others_out |= k != i && (st == SCHED_SUSPENDED || st == SCHED_SUSPENDING);
    }
    return contended && others_out;
}

/* Chunks for the suspend of model i: each process its part. With the
 * disk tier, one process gets what host_budget has room for and a spill
 * file for the rest. False when neither can take it (err says why). */
static bool give_chunks(struct daemon *d, unsigned i, struct worker_job *j, char *err, size_t len)
{
    struct dmodel *dm = &d->dm[i];
    unsigned at = 0;
    if (dm->nmoving == 1) {
        uint64_t want = share(d, i), have = hostpool_given(d->pool, i);
        unsigned n = 0;
        /* one chunk slot for the file */
        if (want > have && (d->disk ? hostpool_give_some(d->pool, i, want - have, j->fds,
                                                         SWAPLINE_MAX_CHUNKS - 1, &n, err, len)
                                    : hostpool_give(d->pool, i, want - have, j->fds,
                                                    SWAPLINE_MAX_CHUNKS, &n, err, len)) < 0)
            return false;
        j->nfds_of[0] = n;
        have = hostpool_given(d->pool, i);
        if (d->disk) { /* always: the share is an estimate, a model may have grown */
            uint64_t max = 0;
            char e2[200];
            /* what host memory does not hold, and room for a model that
             * grew since its share was measured: as much as the driver saw
             * it hold at the last snapshot (an LLM's cache grows after its
             * first answers: 7 GiB at load, 10 after, on an H100), and a
             * slack beyond; reserved against spill_budget, the rest given
             * back once its process says what it wrote */
            uint64_t now = 0, slack = want / 8 > (256ULL << 20) ? want / 8 : (256ULL << 20);
            daemon_measure(d, i, &now);
            uint64_t need = now > want ? now : want;
            int fd = disktier_make(d->disk, i, dm->cfg.name, movedown_owner(dm), (gid_t)-1,
                                   (need > have ? need - have : 0) + slack, &max, e2, sizeof e2);
            if (fd >= 0) {
                dm->spill_fd = j->spill_fd = fd;
                j->spill_max = max;
            } else if (have < need) {
                snprintf(err, len, "host memory holds %llu of %llu bytes, and %s",
                         (unsigned long long)have, (unsigned long long)need, e2);
                hostpool_release(d->pool, i);
                return false;
            }
        }
        return true;
    }
    hostpool_release(d->pool, i); /* chunks are per process: none prepared for several */
    for (unsigned k = 0; k < dm->nmoving; k++) {
        unsigned n = 0;
        if (hostpool_give(d->pool, i, dm->moving_bytes[k] + dm->moving_bytes[k] / 32, j->fds + at,
                          SWAPLINE_MAX_CHUNKS, &n, err, len) < 0) {
            hostpool_release(d->pool, i);
            return false;
        }
        j->nfds_of[k] = n;
        at += n;
    }
    return true;
}

static void post_result(struct daemon *d, unsigned i, bool resume, const char *err)
{
    struct sched_event e = {
        .kind = resume ? SCHED_EV_RESUMED : SCHED_EV_SUSPENDED, .model = i, .error = err};
    daemon_post(d, &e);
}

void moves_start(struct daemon *d, unsigned i, bool resume, int gpu, uint64_t overlap, bool preempt)
{
    struct dmodel *dm = &d->dm[i];
    if (dm->chore) { /* after the prepare or drop in flight */
        dm->pend.on = true;
        dm->pend.resume = resume;
        dm->pend.gpu = gpu;
        dm->pend.overlap = overlap;
        dm->pend.preempt = preempt;
        return;
    }
    static struct worker_job j; /* large; the loop is one thread */
    memset(&j, 0, sizeof j);
    j.model = i;
    j.resume = resume;
    j.driver_only = !dm->cfg.fast;
    j.spill_fd = -1;
    /* overlapped: it may take the memory the others give back as they go,
     * never the GPU's last margin */
    j.floor = overlap ? (d->cfg.margin ? d->cfg.margin : 1) : 0;
    j.fast_only = preempt;
    char err[232];
    dm->began_ms = daemon_now_ms();
    if (!resume) {
        dm->left_gpu = d->smodels[i].gpu;
        dm->left_gpus = d->smodels[i].gpus;
        /* from the last snapshot: a fresh one would wait on the driver here */
        uint64_t most = 0;
        for (size_t g = 0; g < d->snap.ngpus; g++)
            for (size_t k = 0; k < d->snap.gpus[g].nprocs; k++)
                if (daemon_model_of_pid(d, d->snap.gpus[g].procs[k].pid) == (int)i)
                    most += d->snap.gpus[g].procs[k].used;
        dm->host_bytes = most ? most : d->smodels[i].need;
        moving_pids(d, i);
        dm->prepared = false; /* what it prepared is this suspend's now */
        if (d->pool && dm->cfg.fast && !give_chunks(d, i, &j, err, sizeof err)) {
            if (preempt) { /* mid-request: fast swap or nothing */
                post_result(d, i, false, err);
                return;
            }
            log_msg(LOG_LV_WARN, "%s: no host memory for fast swap (%s): the driver's checkpoint "
                                 "instead", dm->cfg.name, err);
            j.driver_only = true;
        }
        /* the driver's checkpoint holds host memory too: within host_budget */
        if (d->pool && j.driver_only &&
            hostpool_charge(d->pool, i, dm->host_bytes, false, err, sizeof err) < 0) {
            hostpool_release(d->pool, i);
            post_result(d, i, false, err);
            return;
        }
    } else if (resume) {
        j.keep = d->pool && keeps(d, i);
    }
    if (resume && dm->left_gpu >= 0 && gpu >= 0 && dm->left_gpu != gpu) {
        /* the driver remaps by UUID */
        snprintf(j.from, sizeof j.from, "%s", d->gpu_uuid[dm->left_gpu]);
        snprintf(j.to, sizeof j.to, "%s", d->gpu_uuid[gpu]);
        /* its slice goes too */
        mgroup_move(dm->pid, dm->start, dm->uid, j.from, (unsigned)gpu, j.to);
    }
    if (!dm->nmoving) { /* adopted suspended: a previous daemon moved its server */
        dm->moving[0] = dm->pid;
        dm->moving_bytes[0] = dm->host_bytes;
        dm->nmoving = 1;
    }
    j.npids = dm->nmoving;
    memcpy(j.pids, dm->moving, sizeof j.pids);
    memcpy(j.bytes, dm->moving_bytes, sizeof j.bytes);
    if (resume) /* its slices promise again what it takes back */
        mgroup_suspended(dm->pid, dm->start, dm->uid, false);
    /* without the driver's checkpoints, fast swap may still serve */
    int rc = -1;
    if (!d->ckpt && !dm->cfg.fast)
        snprintf(err, sizeof err, "%s", d->ckpt_why);
    else
        rc = worker_start(d->worker, &j, err, sizeof err);
    if (rc < 0) {
        if (resume) {
            mgroup_suspended(dm->pid, dm->start, dm->uid, true);
        } else {
            if (d->pool)
                hostpool_release(d->pool, i);
            /* the spill file made for it, and its reservation, with it */
            movedown_close_fd(dm);
            disktier_remove(d->disk, i);
        }
        post_result(d, i, resume, err);
    }
}

/* On a worker's thread: a prepare or a drop, to the model's main process. */
static void chore_job(const struct worker_job *j, struct worker_report *r)
{
    int rc;
    if (j->chore == WORKER_SPILL) {
        struct swapline_info in;
        rc = move_spill(j->pids[0], j->spill_fd, j->spill_max, j->spill_bytes, &in, r->error,
                        sizeof r->error);
        r->disk = in.disk;
        r->disk_ms = in.disk_ms;
        r->held = in.held;
    } else if (j->chore == WORKER_PREPARE) {
        rc = move_prepare(j->pids[0], j->fds, j->nfds_of[0], &r->pin_ms, r->error,
                          sizeof r->error);
    } else {
        rc = move_drop(j->pids[0], r->error, sizeof r->error);
    }
    r->ok = rc == 0;
}

/* On a worker's thread: the move itself, by the path move.c picks, for
 * each of the model's processes: all of them, or none (those moved before
 * one failed are moved back). */
void moves_job(void *arg, const struct worker_job *j, struct worker_report *r)
{
    const struct daemon *d = arg;
    if (j->chore != WORKER_MOVE) {
        chore_job(j, r);
        return;
    }
    struct move_result pr[WORKER_MAX_PIDS];
    struct move_fast f[WORKER_MAX_PIDS];
    unsigned done = 0, at = 0;
    int rc = 0;
    memset(pr, 0, sizeof pr); /* move.c asks each process which path */
    r->fast = true;
    for (unsigned k = 0; k < j->npids && rc == 0; k++, done++) {
        f[k] = (struct move_fast){.fds = j->fds + at,
                                  .nfds = j->nfds_of[k],
                                  .floor = j->floor,
                                  .keep = j->keep,
                                  .fast_only = j->fast_only,
                                  .spill_fd = k == 0 ? j->spill_fd : -1,
                                  .spill_max = k == 0 ? j->spill_max : 0};
        at += j->nfds_of[k];
        rc = j->resume
                 ? move_resume(d->ckpt, d->ckpt_why, j->pids[k], j->from[0] ? j->from : NULL,
                               j->to[0] ? j->to : NULL, &f[k], &pr[k], r->error, sizeof r->error)
                 : move_suspend(d->ckpt, d->ckpt_why, j->pids[k], 30000, j->driver_only, &f[k],
                                &pr[k], r->error, sizeof r->error);
        r->fast &= pr[k].path == MOVE_FAST;
        r->bytes += pr[k].fast.bytes;
        if (pr[k].path == MOVE_DRIVER && pr[k].note[0] && !r->note[0])
            snprintf(r->note, sizeof r->note, "pid %d: %s", (int)j->pids[k], pr[k].note);
    }
    r->held = j->npids == 1 ? pr[0].fast.held : 0;
    r->disk = j->npids == 1 ? pr[0].fast.disk : 0;
    r->disk_ms = j->npids == 1 ? pr[0].fast.disk_ms : 0;
    if (rc < 0 && done > 1) { /* all or none: the others go back as they were */
        char e2[232];
        for (unsigned k = 0; k + 1 < done; k++)
            if (j->resume)
                move_suspend(d->ckpt, d->ckpt_why, j->pids[k], 30000, j->driver_only, &f[k], &pr[k],
                             e2, sizeof e2);
            else
                move_resume(d->ckpt, d->ckpt_why, j->pids[k], NULL, NULL, NULL, &pr[k], e2,
                            sizeof e2);
        size_t n = strlen(r->error);
        snprintf(r->error + n, sizeof r->error - n, " (pid %d; the model's other processes %s)",
                 (int)j->pids[done - 1], j->resume ? "stay suspended" : "run on");
    }
    r->ok = rc == 0;
}

/* A prepare or drop is done: the model's chunks are pinned, or back. */
static void chore_done(struct daemon *d, const struct worker_report *r)
{
    struct dmodel *dm = &d->dm[r->model];
    dm->chore = false;
    movedown_close_fd(dm);
    if (r->chore == WORKER_SPILL) {
        movedown_done(d, r);
    } else if (r->chore == WORKER_PREPARE && r->ok) {
        dm->pin_ms += r->pin_ms;
        dm->pin_steps++;
        uint64_t has = hostpool_given(d->pool, r->model);
        dm->prepared = has >= share(d, r->model); /* else the next step, while idle */
        dm->unpredicted_ms = 0;
        /* its process pinned them between its requests: when, and how
         * long, is what to look at where its requests slowed */
        char b[32];
        units_fmt_size(has, b, sizeof b);
        if (dm->prepared)
            log_msg(LOG_LV_INFO,
                    "%s: host memory readied for its next suspend: %s pinned in %.2f s "
                    "(%u steps, while idle)",
                    dm->cfg.name, b, (double)dm->pin_ms / 1000, dm->pin_steps);
    } else {
        if (r->chore == WORKER_PREPARE)
            log_msg(LOG_LV_INFO, "%s: host memory not readied ahead: %s", dm->cfg.name, r->error);
        dm->prepared = false;
        hostpool_release(d->pool, r->model);
    }
    if (dm->pend.on) {
        dm->pend.on = false;
        moves_start(d, r->model, dm->pend.resume, dm->pend.gpu, dm->pend.overlap,
                    dm->pend.preempt);
    }
}

void moves_done(void *arg, const struct worker_report *r)
{
    struct daemon *d = arg;
    struct dmodel *dm = &d->dm[r->model];
    if (r->chore != WORKER_MOVE) {
        chore_done(d, r);
        moves_plan(d);
        return;
    }
    struct sched_event e = {.kind = r->resume ? SCHED_EV_RESUMED : SCHED_EV_SUSPENDED,
                            .model = r->model,
                            .ok = r->ok,
                            .bound = !r->resume && r->fast,
                            .error = r->error};
    movedown_close_fd(dm);
    if (r->resume != r->ok) /* suspended, or still: its slices promise nothing meanwhile */
        mgroup_suspended(dm->pid, dm->start, dm->uid, true);
    /* its spill file: what it holds now; none once it is back on the GPU */
    if (!r->resume && r->ok && r->fast)
        disktier_set(d->disk, r->model, r->disk);
    else if (r->ok || !r->resume) /* back on the GPU, or never went */
        disktier_remove(d->disk, r->model);
    if (!r->resume && r->ok) {
        /* never quietly slow: the first suspend by the driver says why */
        if (!r->fast && r->note[0] && strcmp(dm->how, "checkpoint") != 0)
            log_msg(LOG_LV_NOTICE, "%s: %s; the driver's checkpoint moves it", dm->cfg.name,
                    r->note);
        snprintf(dm->how, sizeof dm->how, "%s", r->fast ? "fast" : "checkpoint");
        if (r->fast && r->bytes)
            dm->host_bytes = dm->moved = r->bytes; /* what moved, not what NVML counted */
        e.bytes = dm->host_bytes;
    }
    if (r->ok && r->fast && r->disk) { /* the disk's rate, beside the link's */
        char a[32], b[32];
        double mbs = r->disk_ms ? (double)r->disk / 1e3 / (double)r->disk_ms : 0;
        if (r->resume)
            log_msg(LOG_LV_INFO, "%s: %s read back from disk in %.2f s (%.0f MB/s)", dm->cfg.name,
                    units_fmt_size(r->disk, a, sizeof a), (double)r->disk_ms / 1000, mbs);
        else
            log_msg(LOG_LV_INFO,
                    "%s: %s of it went to disk (%s) in %.2f s (%.0f MB/s), host memory having "
                    "room for %s",
                    dm->cfg.name, units_fmt_size(r->disk, a, sizeof a), disktier_dir(d->disk),
                    (double)r->disk_ms / 1000, mbs, units_fmt_size(r->held, b, sizeof b));
    }
    if (d->pool) {
        /* its chunks: kept while they hold its bytes, the unused ones back */
        if (!r->resume && r->ok && !r->fast) {
            /* the driver's checkpoint holds host memory outside chunks: it
             * counts (when fast swap refused only now, it is held already) */
            char e2[200];
            hostpool_keep(d->pool, r->model, 0);
            if (!hostpool_charged(d->pool, r->model) &&
                hostpool_charge(d->pool, r->model, dm->host_bytes, true, e2, sizeof e2) < 0)
                log_msg(LOG_LV_WARN, "%s: %s%s", dm->cfg.name, e2,
                        d->disk ? ": models move down to disk to make up for it" : "");
        } else if (!r->resume && r->ok && r->fast && dm->nmoving == 1) {
            hostpool_keep(d->pool, r->model, r->held);
        } else if (r->resume && r->ok && r->keep && r->fast && hostpool_given(d->pool, r->model)) {
            dm->prepared = true; /* its chunks stay pinned, ready for its next suspend */
            dm->unpredicted_ms = 0;
        } else if (r->resume ? r->ok : !(r->ok && r->fast)) {
            hostpool_release(d->pool, r->model);
        }
    }
    daemon_step(d, &e);
}

/* Asks model i's process to pin one step more of chunks ahead of its next
 * suspend: only from the populated spare (chunks the model would fault in
 * as it pins cost the machine as much as the suspend would). */
static void prepare(struct daemon *d, unsigned i)
{
    struct dmodel *dm = &d->dm[i];
    struct hostpool_stats st;
    hostpool_stats(d->pool, &st);
    uint64_t has = hostpool_given(d->pool, i), all = share(d, i);
    uint64_t want = all > has ? all - has : 0;
    want = want < PREPARE_STEP ? want : PREPARE_STEP;
    if (dm->pid <= 0 || !want || st.spare < want)
        return;
    if (!has) { /* a readying begins */
        dm->pin_ms = 0;
        dm->pin_steps = 0;
    }
    static struct worker_job j;
    memset(&j, 0, sizeof j);
    j.model = i;
    j.chore = WORKER_PREPARE;
    j.pids[0] = dm->pid;
    j.npids = 1;
    char err[160];
    unsigned n = 0;
    if (hostpool_give(d->pool, i, want, j.fds, SWAPLINE_MAX_CHUNKS, &n, err, sizeof err) < 0)
        return;
    j.nfds_of[0] = n;
    dm->chore = true;
    if (worker_start(d->worker, &j, err, sizeof err) < 0) {
        dm->chore = false;
        hostpool_release(d->pool, i);
    }
}

static void drop(struct daemon *d, unsigned i)
{
    struct dmodel *dm = &d->dm[i];
    static struct worker_job j;
    memset(&j, 0, sizeof j);
    j.model = i;
    j.chore = WORKER_DROP;
    j.pids[0] = dm->pid;
    j.npids = 1;
    char err[160];
    dm->chore = true;
    if (worker_start(d->worker, &j, err, sizeof err) < 0) {
        dm->chore = false;
        dm->prepared = false;
        hostpool_release(d->pool, i);
    }
}

/* The largest share among the running models a suspend could take with
 * no host memory readied (but model except): what must stay free. */
static uint64_t largest_unready(const struct daemon *d, int except)
{
    uint64_t most = 0;
    for (size_t i = 0; i < d->sched.nmodels; i++) {
        enum sched_state st = d->smodels[i].state;
        if ((int)i == except || d->dm[i].prepared || d->dm[i].chore ||
            !(st == SCHED_READY || st == SCHED_BUSY) || !swappable(d, (unsigned)i))
            continue;
        uint64_t s = share(d, (unsigned)i);
        most = s > most ? s : most;
    }
    return most;
}

/* The pool's limit: host_budget, or less while the machine runs short of
 * RAM (other programs grew): what the pool holds plus what is available
 * past a margin. Twice a second at most. */
static void follow_ram(struct daemon *d, uint64_t now)
{
    if (now - d->ram_checked_ms < 500)
        return;
    d->ram_checked_ms = now;
    uint64_t avail = meminfo_available();
    if (avail == UINT64_MAX)
        return;
    struct hostpool_stats st;
    hostpool_stats(d->pool, &st);
    uint64_t held = st.spare + st.given + st.charged + st.filling, keep = 1ULL << 30;
    uint64_t fits = held + (avail > keep ? avail - keep : 0);
    uint64_t limit = fits < d->host_budget ? fits : d->host_budget;
    if (limit != st.limit) {
        char a[32], b[32];
        if (limit < st.limit && (st.limit - limit) * 16 > d->host_budget)
            log_msg(LOG_LV_NOTICE, "RAM is short: host memory for suspended models lowered to %s "
                                   "(host_budget %s)",
                    units_fmt_size(limit, a, sizeof a), units_fmt_size(d->host_budget, b, sizeof b));
        hostpool_set_limit(d->pool, limit);
    }
}

void moves_plan(struct daemon *d)
{
    if (!d->pool)
        return;
    uint64_t now = daemon_now_ms(), largest = 0, prepared = 0, out = 0, lacks = 0;
    bool suspended = false, wanting = false, coming = false, wanted[CONFIG_MAX_MODELS];
    int next[SCHED_MAX_GPUS];
    bool contended[SCHED_MAX_GPUS];
    for (size_t g = 0; g < d->sched.ngpus; g++) {
        contended[g] = schedwhen_contended(&d->sched, (int)g);
        next[g] = contended[g] ? schedwhen_next_victim(&d->sched, (int)g) : -1;
    }
    for (size_t i = 0; i < d->sched.nmodels; i++) {
        enum sched_state st = d->smodels[i].state;
        if (!swappable(d, (unsigned)i))
            continue;
        uint64_t s = share(d, (unsigned)i);
        largest = s > largest ? s : largest;
        bool gone = st == SCHED_SUSPENDED || st == SCHED_SUSPENDING || st == SCHED_RESUMING;
        suspended |= gone;
        if (gone)
            out += hostpool_given(d->pool, (unsigned)i);
    }
    hostpool_set_chunk(d->pool, largest);
    /* Which models keep host memory ready: while nothing is out, the one
     * each contended GPU would move next (one share, no more); while
     * models are out and switches come, every model a switch could move
     * (each suspend is then only copies), within host_budget */
    for (size_t i = 0; i < d->sched.nmodels; i++) {
        struct dmodel *dm = &d->dm[i];
        const struct sched_model *m = &d->smodels[i];
        bool up = m->state == SCHED_READY || m->state == SCHED_BUSY;
        bool on_contended = m->gpu >= 0 && (size_t)m->gpu < d->sched.ngpus && contended[m->gpu];
        wanted[i] = up && on_contended && swappable(d, (unsigned)i) && dm->nmoving <= 1 &&
                    !m->pinned && (suspended || next[m->gpu] == (int)i);
        /* a model starting where others are out may be the next to go as
         * soon as it is up: its share is populated while it loads */
        coming |= m->state == SCHED_STARTING && on_contended && swappable(d, (unsigned)i);
        /* what it holds readied ahead, all of its share or the steps so
         * far (a prepare in flight holds its chunks already) */
        uint64_t has = up ? hostpool_given(d->pool, (unsigned)i) : 0;
        wanting |= wanted[i] && !dm->prepared && has < share(d, (unsigned)i);
        if (dm->chore) {
            prepared += has;
            continue;
        }
        if (!dm->prepared && !has)
            continue;
        if (!up || !wanted[i]) {
            /* no longer wanted: after a while (a model that became the
             * latest used is the next to go again soon), or at once when
             * it cannot be; never while it serves (unpinning holds it up
             * too), but as soon as it is idle */
            if (up && swappable(d, (unsigned)i) && dm->nmoving <= 1 && !dm->unpredicted_ms)
                dm->unpredicted_ms = now;
            if ((!up || !swappable(d, (unsigned)i) || dm->nmoving > 1 ||
                 now - dm->unpredicted_ms >= UNPREDICTED_MS) &&
                !(up && m->state == SCHED_BUSY)) {
                drop(d, (unsigned)i);
                continue;
            }
        } else {
            dm->unpredicted_ms = 0;
        }
        prepared += has;
    }
    struct hostpool_stats st;
    hostpool_stats(d->pool, &st);
    uint64_t left = st.limit > out ? st.limit - out : 0;
    /* the model each GPU moves next first (its suspend is the one that
     * comes), then the others a switch could move, each only where it
     * leaves room for the largest other model not readied: a suspend
     * nobody saw coming (`vram suspend`, another GPU) must still find
     * host memory, or it takes the driver's slow path */
    for (int pass = 0; pass < 2 && wanting; pass++)
        for (size_t i = 0; i < d->sched.nmodels; i++) {
            struct dmodel *dm = &d->dm[i];
            uint64_t has = hostpool_given(d->pool, (unsigned)i); /* counted in prepared */
            /* a model serving a request is readied once it is idle again */
            if (!wanted[i] || dm->prepared || dm->chore || d->smodels[i].state != SCHED_READY ||
                (next[d->smodels[i].gpu] == (int)i) != (pass == 0) ||
                prepared - has + share(d, (unsigned)i) + largest_unready(d, (int)i) > left)
                continue;
            prepare(d, (unsigned)i);
            if (dm->chore)
                prepared += hostpool_given(d->pool, (unsigned)i) - has;
        }
    /* what the readyings still lack past the steps in flight: the spare
     * is kept at that, neither let go nor made again between steps */
    for (size_t i = 0; i < d->sched.nmodels; i++) {
        uint64_t has = hostpool_given(d->pool, (unsigned)i), s = share(d, (unsigned)i);
        if (wanted[i] && !d->dm[i].prepared && has < s)
            lacks = s - has > lacks ? s - has : lacks;
    }
    /* room in host memory for the next suspend, made ahead from the disk
     * tier: the largest share not readied of a model a switch could move,
     * one starting included (keep_alive 0 suspends it as soon as it has
     * answered) */
    uint64_t need = 0;
    for (size_t i = 0; i < d->sched.nmodels; i++) {
        const struct sched_model *m = &d->smodels[i];
        bool up = m->state == SCHED_READY || m->state == SCHED_BUSY ||
                  m->state == SCHED_STARTING;
        bool on_contended = m->gpu >= 0 && (size_t)m->gpu < d->sched.ngpus && contended[m->gpu];
        uint64_t s = share(d, (unsigned)i), has = hostpool_given(d->pool, (unsigned)i);
        if (up && on_contended && swappable(d, (unsigned)i) && !m->pinned && s > has &&
            s - has > need)
            need = s - has;
    }
    follow_ram(d, now);
    movedown_room(d, need);
    /* the spare: what the models being readied still lack, or one share
     * for a model still starting (or for a suspend nobody saw coming),
     * within what is left */
    uint64_t spare = coming || !suspended ? largest : lacks;
    if (!suspended)
        spare = spare > prepared ? spare - prepared : 0;
    if (prepared + spare > left)
        spare = left > prepared ? left - prepared : 0;
    hostpool_set_spare(d->pool, spare);
}

void moves_forget(struct daemon *d, unsigned i)
{
    struct dmodel *dm = &d->dm[i];
    dm->prepared = false;
    dm->unpredicted_ms = 0;
    if (d->pool && !dm->chore)
        hostpool_release(d->pool, i);
    if (!dm->spilling)
        disktier_remove(d->disk, i);
}
