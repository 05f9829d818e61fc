/* daemon: `vram serve`'s core, the part that decides. Turns the world's
 * events (requests, health answers, exits, suspend reports, the clock and
 * the GPU snapshot, as the parts report them) into the scheduler's steps,
 * and the scheduler's actions into calls of the parts that act
 * (daemonops.h: processes, moves, placement, reports, the control API),
 * whose own files it never includes. Events raised while actions are
 * carried out are queued and applied after them, never re-entrantly. */
#include "daemon/daemon.h"

#include <stdio.h>
#include <string.h>

#include "host/clock.h"
#include "app/log.h"
#include "daemon/daemonops.h"
#include "daemon/loopwatch.h"
#include "http/wbuf.h"
#include "host/family.h"

uint64_t daemon_now_ms(void)
{
    return clock_mono_ms();
}

uint64_t daemon_wall_ms(uint64_t mono_ms)
{
    uint64_t wall = clock_wall_ms(), mono = clock_mono_ms();
    return mono >= mono_ms ? wall - (mono - mono_ms) : wall + (mono_ms - mono);
}

uint64_t daemon_held_ms(const struct daemon *d, unsigned model)
{
    const struct dmodel *dm = &d->dm[model];
    return dm->held_ms + (dm->held_since_ms ? daemon_now_ms() - dm->held_since_ms : 0);
}

int daemon_model_index(const struct daemon *d, const char *name)
{
    for (size_t i = 0; i < d->sched.nmodels; i++)
        if (!d->dm[i].removed && !strcmp(d->smodels[i].name, name))
            return (int)i;
    return -1;
}

/* The model whose process (or one its command started: a worker per GPU)
 * is pid, or -1. */
int daemon_model_of_pid(const struct daemon *d, uint32_t pid)
{
    pid_t main = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < d->sched.nmodels; i++)
            if (d->dm[i].pid > 0 && (uint32_t)d->dm[i].pid == (pass ? (uint32_t)main : pid))
                return (int)i;
        if (pass == 0 && !(main = family_main_of((pid_t)pid)))
            break;
    }
    return -1;
}

/* What model i's processes hold in the latest snapshot: on the one of
 * its GPUs where they hold most (its need is per GPU); the sum over all of
 * them in *total. */
uint64_t daemon_measure(const struct daemon *d, unsigned i, uint64_t *total)
{
    uint64_t most = 0, sum = 0;
    for (size_t g = 0; g < d->snap.ngpus; g++) {
        uint64_t here = 0;
        for (size_t k = 0; k < d->snap.gpus[g].nprocs; k++)
            if (daemon_model_of_pid(d, d->snap.gpus[g].procs[k].pid) == (int)i)
                here += d->snap.gpus[g].procs[k].used;
        most = here > most ? here : most;
        sum += here;
    }
    if (total)
        *total = sum;
    return most;
}

/* ---- queued events ---- */

void daemon_post(struct daemon *d, const struct sched_event *e)
{
    if (d->evq_n == sizeof d->evq / sizeof d->evq[0]) {
        log_msg(LOG_LV_ERROR, "event queue full, dropping an event");
        return;
    }
    size_t k = (d->evq_head + d->evq_n++) % (sizeof d->evq / sizeof d->evq[0]);
    d->evq[k] = *e;
    const char *why = e->error ? e->error : ""; /* copied: the caller's text may not outlive it */
    wbuf_copy(d->evq_err[k], sizeof d->evq_err[k], why, strlen(why));
    d->evq[k].error = d->evq_err[k];
}

/* ---- carrying out actions ---- */

static void answer(struct daemon *d, const struct sched_action *a)
{
    struct demand dem;
    if (!demand_take(&d->demands, a->id, &dem))
        return;
    if (a->kind == SCHED_ACT_GRANT)
        dem.ops->granted(dem.arg, a->model);
    else
        dem.ops->refused(dem.arg, a->model, a->refusal, a->why);
}

static void act(struct daemon *d, const struct sched_action *a)
{
    if (log_enabled(LOG_LV_DEBUG)) {
        static const char *const names[] = {
            [SCHED_ACT_START] = "start",     [SCHED_ACT_STOP] = "stop",
            [SCHED_ACT_SUSPEND] = "suspend", [SCHED_ACT_RESUME] = "resume",
            [SCHED_ACT_GRANT] = "grant",     [SCHED_ACT_REFUSE] = "refuse",
        };
        log_msg(LOG_LV_DEBUG, "scheduler: %s %s (gpu %d, demand %llu%s%s)", names[a->kind],
                a->model < d->sched.nmodels ? d->smodels[a->model].name : "?", a->gpu,
                (unsigned long long)a->id, a->kind == SCHED_ACT_REFUSE ? ": " : "",
                a->kind == SCHED_ACT_REFUSE ? a->why : "");
    }
    switch (a->kind) {
    case SCHED_ACT_START:
        d->ops->start(d, a->model, a->gpu);
        break;
    case SCHED_ACT_STOP:
        d->ops->stop(d, a->model);
        break;
    case SCHED_ACT_SUSPEND:
        d->ops->move(d, a->model, false, -1, 0, a->preempt);
        break;
    case SCHED_ACT_RESUME:
        d->ops->move(d, a->model, true, a->gpu, a->overlap, false);
        break;
    case SCHED_ACT_GRANT:
    case SCHED_ACT_REFUSE:
        answer(d, a);
        break;
    }
}

uint64_t daemon_demand(struct daemon *d, unsigned model, bool hold, uint64_t wait_ms,
                       const struct demand_ops *ops, void *arg, uint64_t *idp, const char *who)
{
    uint64_t id = demand_add(&d->demands, ops, arg);
    if (idp)
        *idp = id; /* before the step: it may answer at once */
    if (!id)
        return 0;
    demand_set_who(&d->demands, id, who); /* before the step: it may evict for it */
    /* a start or a resume may follow: placed by what the GPUs hold and
     * others' slices promise now, not up to a tick ago (a `vram run`
     * admitted meanwhile) */
    enum sched_state st = model < d->sched.nmodels ? d->smodels[model].state : SCHED_READY;
    if (st == SCHED_STOPPED || st == SCHED_SUSPENDED || st == SCHED_FAILED)
        d->ops->place(d);
    struct sched_event e = {.kind = SCHED_EV_DEMAND,
                            .model = model,
                            .id = id,
                            .deadline_ms = daemon_now_ms() + wait_ms,
                            .hold = hold};
    daemon_step(d, &e);
    return id;
}

void daemon_withdraw(struct daemon *d, unsigned model, uint64_t id)
{
    struct demand dem;
    /* answered already: the asker has heard, and holds what it was given.
     * A grant is answered in the same step that makes it, so an asker
     * cannot leave between the two. */
    if (!demand_take(&d->demands, id, &dem))
        return;
    struct sched_event e = {.kind = SCHED_EV_WITHDRAW, .model = model, .id = id};
    daemon_step(d, &e);
}

void daemon_release(struct daemon *d, unsigned model)
{
    daemon_release_keep(d, model, false, 0);
}

void daemon_release_keep(struct daemon *d, unsigned model, bool keep_set, uint64_t keep_ms)
{
    struct sched_event e = {
        .kind = SCHED_EV_RELEASE, .model = model, .keep_set = keep_set, .keep_ms = keep_ms};
    daemon_step(d, &e);
}

void daemon_step(struct daemon *d, const struct sched_event *e)
{
    daemon_post(d, e);
    if (d->stepping)
        return;
    d->stepping = true;
    loopwatch_begin("a scheduler step (the store, the event stream, starting processes)");
    while (d->evq_n) {
        struct sched_event ev = d->evq[d->evq_head];
        char err[sizeof d->evq_err[0]];
        memcpy(err, d->evq_err[d->evq_head], sizeof err);
        ev.error = err;
        d->evq_head = (d->evq_head + 1) % (sizeof d->evq / sizeof d->evq[0]);
        d->evq_n--;
        enum sched_state was[CONFIG_MAX_MODELS];
        for (size_t i = 0; i < d->sched.nmodels; i++)
            was[i] = d->smodels[i].state;
        static struct sched_action acts[SCHED_MAX_QUEUE + 4 * CONFIG_MAX_MODELS];
        uint64_t now = daemon_now_ms();
        for (size_t i = 0; i < d->sched.nmodels; i++) { /* what a time slice would cost */
            d->smodels[i].backlog = d->ops->waiting(d, (unsigned)i);
            d->smodels[i].switch_ms =
                (uint64_t)((d->dm[i].last_suspend_s + d->dm[i].last_resume_s) * 1000);
        }
        size_t n = sched_step(&d->sched, &ev, now, acts, sizeof acts / sizeof acts[0]);
        for (size_t k = 0; k < n; k++) /* an eviction that stops: its line says why */
            if (acts[k].kind == SCHED_ACT_STOP && acts[k].model < d->sched.nmodels)
                snprintf(d->dm[acts[k].model].stop_why, sizeof d->dm[0].stop_why, "%s",
                         acts[k].why);
        for (size_t i = 0; i < d->sched.nmodels; i++)
            d->ops->changed(d, (unsigned)i, was[i], &ev);
        for (size_t k = 0; k < n; k++)
            act(d, &acts[k]);
        d->ops->stepped(d, n ? daemon_now_ms() : now);
    }
    d->stepping = false;
    d->ops->settled(d);
    loopwatch_end();
}
