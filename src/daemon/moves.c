/* moves: a model's memory going to host RAM and back (suspend, resume,
 * preemption): which of its processes hold memory, its window of the
 * daemon's host pool, the worker's job (park.c picks the path for each
 * process: all of them move, or none), and what the job's report changes.
 * The scheduler decides; this carries it out. */
#include "daemon/moves.h"

#include <stdio.h>
#include <string.h>

#include "app/log.h"
#include "core/units.h"
#include "daemon/hostpool.h"
#include "daemon/mgroup.h"
#include "park/park.h"

/* The processes of model i that hold GPU memory, from the snapshot measure
 * just took (its server alone, when it shows none yet). */
static void parked_pids(struct daemon *d, unsigned i)
{
    struct dmodel *dm = &d->dm[i];
    dm->nparked = 0;
    for (size_t g = 0; g < d->snap.ngpus; g++)
        for (size_t k = 0; k < d->snap.gpus[g].nprocs; k++) {
            const struct snap_proc *p = &d->snap.gpus[g].procs[k];
            if (daemon_model_of_pid(d, p->pid) != (int)i)
                continue;
            unsigned at = 0;
            while (at < dm->nparked && dm->parked[at] != (pid_t)p->pid)
                at++;
            if (at == dm->nparked) {
                if (at == sizeof dm->parked / sizeof dm->parked[0])
                    continue;
                dm->parked[at] = (pid_t)p->pid;
                dm->parked_bytes[at] = 0;
                dm->nparked++;
            }
            dm->parked_bytes[at] += p->used;
        }
    if (!dm->nparked) {
        dm->parked[0] = dm->pid;
        dm->parked_bytes[0] = dm->host_bytes;
        dm->nparked = 1;
    }
}

void moves_start(struct daemon *d, unsigned i, bool resume, int gpu, uint64_t overlap, bool preempt)
{
    struct dmodel *dm = &d->dm[i];
    struct worker_job j = {.model = i,
                           .resume = resume,
                           .driver_only = !dm->cfg.fast,
                           /* overlapped: it may take the memory the others give
                            * back as they go, never the GPU's last margin */
                           .floor = overlap ? (d->cfg.margin ? d->cfg.margin : 1) : 0,
                           .fast_only = preempt};
    char err[232];
    dm->began_ms = daemon_now_ms();
    if (!resume) {
        dm->left_gpu = d->smodels[i].gpu;
        dm->left_gpus = d->smodels[i].gpus;
        daemon_measure(d, i, &dm->host_bytes);
        parked_pids(d, i);
        /* its window of the shared pool: what its last fast swap moved, or
         * (the first time) what it holds on the GPU, which covers it; a
         * window sized to what moves keeps the pool from fragmenting (seen
         * on the H200: windows of 17.5 GiB measured for 16.2 moved) */
        dm->tight = dm->moved && dm->moved <= dm->host_bytes;
        dm->preempting = preempt;
        /* a little over what moved: a model that grew by a few buffers
         * since still fits (the slack goes back once it has moved) */
        uint64_t want = dm->host_bytes;
        if (dm->tight && dm->moved + dm->moved / 32 < want)
            want = dm->moved + dm->moved / 32;
        if (d->pool && dm->cfg.fast && dm->nparked == 1 && dm->moved && dm->moved <= dm->host_bytes)
            dm->parked_bytes[0] = dm->moved;
        if (d->pool && dm->cfg.fast && hostpool_take(&d->pool->map, i, want, &j.pool) < 0) {
            char a[32], b[32];
            units_fmt_size(want, a, sizeof a);
            units_fmt_size(d->pool->map.size, b, sizeof b);
            if (preempt) { /* mid-request: fast swap or nothing */
                snprintf(err, sizeof err, "the host pool has no %s left (of %s)", a, b);
                struct sched_event e = {.kind = SCHED_EV_SUSPENDED, .model = i, .error = err};
                daemon_post(d, &e);
                return;
            }
            log_msg(LOG_LV_WARN,
                    "%s: the host pool has no %s left (of %s): the driver's checkpoint instead",
                    dm->cfg.name, a, b);
            j.driver_only = true;
        }
    } else if (dm->left_gpu >= 0 && gpu >= 0 && dm->left_gpu != gpu) {
        /* the driver remaps by UUID */
        snprintf(j.from, sizeof j.from, "%s", d->gpu_uuid[dm->left_gpu]);
        snprintf(j.to, sizeof j.to, "%s", d->gpu_uuid[gpu]);
        mgroup_move(dm->pid, dm->start, j.from, (unsigned)gpu, j.to); /* its slice goes too */
    }
    if (!dm->nparked) { /* adopted suspended: a previous daemon moved its server */
        dm->parked[0] = dm->pid;
        dm->parked_bytes[0] = dm->host_bytes;
        dm->nparked = 1;
    }
    j.npids = dm->nparked;
    memcpy(j.pids, dm->parked, sizeof j.pids);
    memcpy(j.bytes, dm->parked_bytes, sizeof j.bytes);
    if (resume) /* its slices promise again what it takes back */
        mgroup_park(dm->pid, dm->start, false);
    /* without the driver's checkpoints, fast swap may still serve */
    int rc = -1;
    if (!d->ckpt && !dm->cfg.fast)
        snprintf(err, sizeof err, "%s", d->ckpt_why);
    else
        rc = worker_start(d->worker, &j, err, sizeof err);
    if (rc < 0) {
        if (resume)
            mgroup_park(dm->pid, dm->start, true);
        struct sched_event e = {
            .kind = resume ? SCHED_EV_RESUMED : SCHED_EV_SUSPENDED, .model = i, .error = err};
        daemon_post(d, &e);
    }
}

/* On a worker's thread: the move itself, by the path park.c picks, for
 * each of the model's processes: all of them, or none (those moved before
 * one failed are moved back). */
void moves_job(void *arg, const struct worker_job *j, struct worker_report *r)
{
    const struct daemon *d = arg;
    struct park_result pr[WORKER_MAX_PIDS];
    struct park_fast f[WORKER_MAX_PIDS];
    uint64_t from = 0;
    unsigned done = 0;
    int rc = 0;
    memset(pr, 0, sizeof pr); /* park.c asks each process which path */
    r->fast = true;
    for (unsigned k = 0; k < j->npids && rc == 0; k++, done++) {
        /* each its part of the window: what it held covers what moves */
        uint64_t len = j->npids == 1 ? swapline_window_len(&j->pool) : j->bytes[k];
        f[k] = (struct park_fast){
            .floor = j->floor, .fast_only = j->fast_only, .pool_fd = d->pool ? d->pool->fd : -1};
        swapline_window_part(&j->pool, from, len, &f[k].pool);
        from += len;
        rc = j->resume
                 ? park_resume(d->ckpt, d->ckpt_why, j->pids[k], j->from[0] ? j->from : NULL,
                               j->to[0] ? j->to : NULL, &f[k], &pr[k], r->error, sizeof r->error)
                 : park_suspend(d->ckpt, d->ckpt_why, j->pids[k], 30000, j->driver_only, &f[k],
                                &pr[k], r->error, sizeof r->error);
        r->fast &= pr[k].path == PARK_FAST;
        r->bytes += pr[k].fast.bytes;
        if (pr[k].path == PARK_DRIVER && pr[k].note[0] && !r->note[0])
            snprintf(r->note, sizeof r->note, "pid %d: %s", (int)j->pids[k], pr[k].note);
    }
    if (rc < 0 && done > 1) { /* all or none: the others go back as they were */
        char e2[232];
        for (unsigned k = 0; k + 1 < done; k++)
            if (j->resume)
                park_suspend(d->ckpt, d->ckpt_why, j->pids[k], 30000, j->driver_only, &f[k], &pr[k],
                             e2, sizeof e2);
            else
                park_resume(d->ckpt, d->ckpt_why, j->pids[k], NULL, NULL, NULL, &pr[k], e2,
                            sizeof e2);
        size_t n = strlen(r->error);
        snprintf(r->error + n, sizeof r->error - n, " (pid %d; the model's other processes %s)",
                 (int)j->pids[done - 1], j->resume ? "stay suspended" : "run on");
    }
    r->ok = rc == 0;
}

void moves_done(void *arg, const struct worker_report *r)
{
    struct daemon *d = arg;
    struct dmodel *dm = &d->dm[r->model];
    if (!r->resume && !r->ok && dm->tight) {
        /* its window, sized to what moved last time, was short (it grew):
         * nothing moved; again, with a window for all it holds */
        log_msg(LOG_LV_INFO, "%s: %s; again with a larger window", dm->cfg.name, r->error);
        dm->moved = 0;
        moves_start(d, r->model, false, -1, 0, dm->preempting);
        return;
    }
    struct sched_event e = {.kind = r->resume ? SCHED_EV_RESUMED : SCHED_EV_SUSPENDED,
                            .model = r->model,
                            .ok = r->ok,
                            .bound = !r->resume && r->fast,
                            .error = r->error};
    if (r->resume != r->ok) /* suspended, or still: its slices promise nothing meanwhile */
        mgroup_park(dm->pid, dm->start, true);
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
    /* the window covered what NVML counted: keep what fast swap used */
    if (d->pool && !r->resume)
        hostpool_shrink(&d->pool->map, r->model, r->ok && r->fast ? r->bytes : 0);
    daemon_step(d, &e);
}
