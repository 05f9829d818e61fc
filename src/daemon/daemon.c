/* daemon: `vram serve`'s loop. Turns the world into scheduler events
 * (requests, health answers, exits, checkpoint reports, the clock and the
 * GPU snapshot) and the scheduler's actions into the world (processes,
 * signals, checkpoints, replies). Events raised while actions are carried
 * out are queued and applied after them, never re-entrantly. */
#include "daemon/daemon.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/clock.h"
#include "app/log.h"
#include "app/render_json.h"
#include "app/store.h"
#include "daemon/api.h"
#include "daemon/discover.h"
#include "daemon/events.h"
#include "http/health.h"
#include "daemon/loopwatch.h"
#include "daemon/mgroup.h"
#include "daemon/moves.h"
#include "host/notify.h"
#include "daemon/promised.h"
#include "proxy/proxy.h"
#include "daemon/report.h"
#include "probe/sampler.h"
#include "daemon/modelfd.h"
#include "daemon/super.h"
#include "daemon/testpoint.h"
#include "http/wbuf.h"
#include "move/worker.h"
#include "host/family.h"
#include "probe/probe.h"

#define TICK_MS       200
#define SNAP_MS       1000
#define STOP_GRACE_MS 10000

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

void daemon_emit(struct daemon *d, unsigned model, const char *kind, double seconds,
                 const char *detail)
{
    daemon_emit_reason(d, model, kind, seconds, detail, NULL);
}

void daemon_emit_reason(struct daemon *d, unsigned model, const char *kind, double seconds,
                        const char *detail, json_t *reason)
{
    const char *name = model < d->sched.nmodels ? d->smodels[model].name : "";
    store_event(d->store, clock_wall_ms(), name, kind, seconds, detail);
    /* a failure is worth a warning; the rest is the models' life */
    enum log_level lv = strstr(kind, "fail") || !strcmp(kind, "crashed") ? LOG_LV_WARN : LOG_LV_INFO;
    char took[32] = "";
    if (seconds > 0)
        snprintf(took, sizeof took, " (%.2f s)", seconds);
    log_msg(lv, "%s: %s%s%s%s", name, kind, detail && *detail ? ": " : "", detail ? detail : "",
            took);
    events_send(d->events, clock_wall_ms(), name, kind, seconds, detail, reason);
    json_decref(reason);
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

static void on_timer(evutil_socket_t fd, short what, void *arg);

static void arm(struct dmodel *dm, uint64_t ms)
{
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
    evtimer_add(dm->timer, &tv);
}

static void start_model(struct daemon *d, unsigned i, int gpu)
{
    struct dmodel *dm = &d->dm[i];
    bool taken[CONFIG_MAX_MODELS * 4] = {0};
    for (size_t k = 0; k < d->sched.nmodels; k++)
        if (d->dm[k].port >= d->cfg.port_base && d->dm[k].port - d->cfg.port_base < sizeof taken &&
            d->dm[k].pid > 0)
            taken[d->dm[k].port - d->cfg.port_base] = true;
    unsigned port = super_free_port(d->cfg.port_base, taken, sizeof taken);
    bool fast = dm->cfg.fast && dm->cfg.evict == SCHED_EVICT_SUSPEND;
    /* every GPU of the model, by UUID (indexes change with what is visible) */
    char visible[SCHED_MAX_GPUS * 100] = "";
    size_t at = 0;
    unsigned idx[SCHED_MAX_GPUS], n = 0;
    const char *uuid[SCHED_MAX_GPUS];
    for (size_t g = 0; g < d->sched.ngpus; g++)
        if (d->smodels[i].gpus & (1u << g)) {
            at += (size_t)snprintf(visible + at, sizeof visible - at, "%s%s", at ? "," : "",
                                   d->gpu_uuid[g]);
            idx[n] = (unsigned)g;
            uuid[n++] = d->gpu_uuid[g];
        }
    (void)gpu;
    static char cmd[CONFIG_CMD_MAX + 1024]; /* a discovered model's, for this start */
    static struct modelfd mf;               /* its files, open for this start */
    mf.n = 0;
    if (dm->cfg.source[0]) {
        char dir[CONFIG_PATH_MAX + 16], why[700];
        snprintf(dir, sizeof dir, "%s.models", d->cfg.socket);
        if (modelfd_open(&mf, &dm->cfg, dir, why, sizeof why) < 0) {
            struct sched_event e = {.kind = SCHED_EV_FAILED, .model = i, .error = why};
            daemon_post(d, &e);
            return;
        }
        discover_command(d, i, mf.path, cmd, sizeof cmd);
    }
    /* serve.c and reload.c refuse a configuration that needs libvramcap
     * where it is missing: a model never runs without the cap it was given */
    struct super_spawn sp = {dm->cfg.name,
                             dm->cfg.source[0] ? cmd : dm->cfg.command,
                             d->cfg.logs,
                             visible,
                             port,
                             config_uses_vramcap(&dm->cfg) ? d->shim : NULL,
                             dm->cfg.cap ? d->smodels[i].need : 0,
                             fast,
                             dm->cfg.swap_pool,
                             d->sched.host_budget,
                             fast && d->pool,
                             dm->cfg.env,
                             dm->cfg.nenv,
                             NULL,
                             &dm->cfg.run,
                             mf.fd,
                             mf.n};
    char err[256];
    dm->began_ms = daemon_now_ms();
    if (sp.shim && !sp.shim[0]) {
        modelfd_close(&mf);
        struct sched_event e = {.kind = SCHED_EV_FAILED,
                                .model = i,
                                .error = "libvramcap.so is missing (vram serve --check says "
                                         "where it looked), and this model has a cap or fast swap"};
        daemon_post(d, &e);
        return;
    }
    /* one budget per GPU for all the model's processes (a launcher and its
     * workers): each alone would have the whole share. The files are the
     * model's user's, so that every process of its may write them
     * (ipc/group.h) and each counts as that user's promise. */
    static struct mgroup mg; /* large; the loop is one thread */
    mg.n = 0;
    char why[256];
    dm->uid = dm->cfg.run.on ? dm->cfg.run.uid : geteuid();
    gid_t gid = dm->cfg.run.on ? dm->cfg.run.gid : getegid();
    if (port && sp.shim && sp.cap) {
        if (mgroup_create(&mg, sp.cap, idx, uuid, n, dm->uid, gid, why, sizeof why) == 0)
            sp.cap_group = mg.list;
        else
            log_msg(LOG_LV_WARN, "%s: no group file (%s): a cap for each of its processes alone",
                    dm->cfg.name, why);
    } else if (port && mgroup_create(&mg, d->smodels[i].need, idx, uuid, n, dm->uid, gid, why,
                                     sizeof why) < 0) {
        /* uncapped: the files are its reservation, for `vram run` to see */
        log_msg(LOG_LV_WARN, "%s: no reservation (%s): vram run will not see its share",
                dm->cfg.name, why);
    }
    int gate = -1;
    int started = port ? super_start(&sp, &dm->pid, &dm->start, &gate, err, sizeof err) : -1;
    modelfd_close(&mf); /* the server has its own copies */
    if (started < 0) {
        mgroup_discard(&mg);
        struct sched_event e = {
            .kind = SCHED_EV_FAILED, .model = i, .error = port ? err : "no free port"};
        daemon_post(d, &e);
        return;
    }
    testpoint(TESTPOINT_FORKED);
    mgroup_own(&mg, dm->pid, dm->start);
    dm->child = true;
    dm->port = port;
    dm->starts++;
    /* recorded before it runs anything: a daemon killed meanwhile leaves a
     * record the next one acts on, or a process that exits unreleased */
    report_record(d, i);
    testpoint(TESTPOINT_RECORDED);
    super_go(gate);
    testpoint(TESTPOINT_RELEASED);
    dm->deadline_ms = dm->began_ms + (uint64_t)(dm->cfg.start_timeout_s * 1000);
    arm(dm, 100);
}

/* SIGTERM, then SIGKILL after a grace period (on_timer). */
static void stop_signal(struct dmodel *dm)
{
    super_signal(dm->pid, dm->uid, SIGTERM);
    super_signal(dm->pid, dm->uid, SIGCONT); /* a stopped process sees TERM only once it runs */
    dm->deadline_ms = daemon_now_ms() + STOP_GRACE_MS;
    arm(dm, STOP_GRACE_MS);
}

static void stop_model(struct daemon *d, unsigned i)
{
    struct dmodel *dm = &d->dm[i];
    if (dm->pid <= 0 || !super_alive(dm->pid, dm->start)) {
        struct sched_event e = {.kind = SCHED_EV_EXITED, .model = i};
        mgroup_remove(dm->pid, dm->start, dm->uid);
        dm->pid = 0;
        daemon_post(d, &e);
        return;
    }
    if (dm->cfg.stop[0]) { /* stop = (docker stop NAME): its own way, for stop_timeout */
        char err[160];
        uint64_t ms = (uint64_t)(dm->cfg.stop_timeout_s * 1000);
        dm->stopper = super_stop_cmd(dm->cfg.stop, dm->cfg.name, d->cfg.logs, dm->port, dm->pid,
                                     &dm->cfg.run, err, sizeof err);
        if (dm->stopper > 0) {
            dm->deadline_ms = daemon_now_ms() + ms;
            arm(dm, ms);
            return;
        }
        dm->stopper = 0;
        log_msg(LOG_LV_WARN, "%s: its stop command did not run (%s): SIGTERM", dm->cfg.name, err);
    }
    stop_signal(dm);
}

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
        start_model(d, a->model, a->gpu);
        break;
    case SCHED_ACT_STOP:
        stop_model(d, a->model);
        break;
    case SCHED_ACT_SUSPEND:
        moves_start(d, a->model, false, -1, 0, a->preempt);
        break;
    case SCHED_ACT_RESUME:
        moves_start(d, a->model, true, a->gpu, a->overlap, false);
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
        promised_apply(d);
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

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct daemon *d = arg;
    d->wake_at_ms = 0;
    struct sched_event e = {.kind = SCHED_EV_TICK};
    daemon_step(d, &e);
}

/* Steps again when time alone would change a decision, instead of at the
 * next tick (up to TICK_MS later). */
static void arm_wake(struct daemon *d)
{
    if (!d->base)
        return;
    if (!d->wake && !(d->wake = evtimer_new(d->base, on_wake, d)))
        return;
    uint64_t now = daemon_now_ms(), at = sched_next_ms(&d->sched, now);
    if (at == SCHED_FOREVER || at - now >= TICK_MS) { /* the tick comes first */
        if (d->wake_at_ms)
            evtimer_del(d->wake);
        d->wake_at_ms = 0;
        return;
    }
    if (d->wake_at_ms == at)
        return;
    struct timeval tv = {0, (suseconds_t)((at - now) * 1000)};
    if (evtimer_add(d->wake, &tv) == 0)
        d->wake_at_ms = at;
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
            d->smodels[i].backlog = proxy_waiting(d->proxy, (unsigned)i);
            d->smodels[i].switch_ms =
                (uint64_t)((d->dm[i].last_suspend_s + d->dm[i].last_resume_s) * 1000);
        }
        size_t n = sched_step(&d->sched, &ev, now, acts, sizeof acts / sizeof acts[0]);
        for (size_t k = 0; k < n; k++) /* an eviction that stops: its line says why */
            if (acts[k].kind == SCHED_ACT_STOP && acts[k].model < d->sched.nmodels)
                snprintf(d->dm[acts[k].model].stop_why, sizeof d->dm[0].stop_why, "%s",
                         acts[k].why);
        for (size_t i = 0; i < d->sched.nmodels; i++)
            report_change(d, (unsigned)i, was[i], &ev);
        for (size_t k = 0; k < n; k++)
            act(d, &acts[k]);
        if (d->api) /* none yet while adopting */
            api_states_changed(d->api, n ? daemon_now_ms() : now);
    }
    d->stepping = false;
    moves_plan(d);
    arm_wake(d);
    loopwatch_end();
}

/* ---- health checks, stop timeouts ---- */

/* A model that answered its health check, measured: ready. */
static void measured(struct daemon *d, unsigned i)
{
    struct dmodel *dm = &d->dm[i];
    dm->measure_gen = 0;
    if (d->smodels[i].state != SCHED_STARTING)
        return;
    struct sched_event e = {.kind = SCHED_EV_READY, .model = i, .bytes = daemon_measure(d, i, NULL)};
    if (e.bytes < dm->cfg.vram)
        e.bytes = dm->cfg.vram; /* its slice, if it asked for one, is its size */
    daemon_step(d, &e);
}

static void on_health(void *arg, int status)
{
    struct dmodel *dm = arg;
    struct daemon *d = dm->d;
    dm->health = NULL;
    if (d->smodels[dm->index].state != SCHED_STARTING)
        return;
    if (status == 200) {
        /* ready once measured, by a snapshot taken from now on (off the loop) */
        if (d->sampler) {
            dm->measure_gen = sampler_ask(d->sampler);
            return;
        }
        daemon_refresh(d);
        dm->measure_gen = 1;
        measured(d, dm->index);
        return;
    }
    arm(dm, 200);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct dmodel *dm = arg;
    struct daemon *d = dm->d;
    enum sched_state st = d->smodels[dm->index].state;
    uint64_t now = daemon_now_ms();
    if (st == SCHED_STOPPING || d->quitting) {
        if (dm->stopper && dm->pid > 0 && super_alive(dm->pid, dm->start)) {
            log_msg(LOG_LV_WARN, "%s: still running %.1f s after its stop command: SIGTERM",
                    dm->cfg.name, dm->cfg.stop_timeout_s);
            if (dm->stopper > 0)
                kill(-dm->stopper, SIGKILL); /* its session: the command is reaped as it ends */
            dm->stopper = 0;
            stop_signal(dm);
        } else if (dm->pid > 0 && super_alive(dm->pid, dm->start)) {
            super_signal(dm->pid, dm->uid, SIGKILL);
        }
        return;
    }
    if (st != SCHED_STARTING)
        return;
    if (now >= dm->deadline_ms) {
        char why[256];
        snprintf(why, sizeof why, "no answer on http://127.0.0.1:%u%s within %.0f s", dm->port,
                 dm->cfg.health, dm->cfg.start_timeout_s);
        health_cancel(dm->health);
        dm->health = NULL;
        super_signal(dm->pid, dm->uid, SIGKILL);
        struct sched_event e = {.kind = SCHED_EV_FAILED, .model = dm->index, .error = why};
        daemon_step(d, &e);
        return;
    }
    /* a connection per poll: one that failed to connect (the server not
     * up yet) is never reused in a bad state */
    if (!dm->health)
        dm->health = health_check(d->base, dm->port, dm->cfg.health, 2000, on_health, dm);
    if (!dm->health)
        arm(dm, 200);
}

/* ---- exits ---- */

static void exited(struct daemon *d, unsigned i, const char *how)
{
    struct dmodel *dm = &d->dm[i];
    /* vram's words only: the scheduler's error reaches the proxy's clients;
     * the log's last line is added where the socket's people ask (api.c) */
    char why[320];
    snprintf(why, sizeof why, "%s", how);
    /* its main process is gone: so is whatever it left running */
    super_signal(dm->pid, dm->uid, SIGKILL);
    health_cancel(dm->health);
    dm->health = NULL;
    family_forget(dm->pid);
    mgroup_remove(dm->pid, dm->start, dm->uid); /* its slices: whatever is left of it is dying */
    dm->pid = 0;
    if (dm->stopper < 0)
        dm->stopper = 0; /* one still running is reaped as it ends */
    if (d->proxy)
        proxy_forget_model(d->proxy, i);
    evtimer_del(dm->timer);
    struct sched_event e = {.kind = d->smodels[i].state == SCHED_STARTING ? SCHED_EV_FAILED
                                                                          : SCHED_EV_EXITED,
                            .model = i,
                            .error = why};
    daemon_step(d, &e);
}

static void reap(struct daemon *d)
{
    int status;
    pid_t p;
    while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
        for (size_t i = 0; i < d->sched.nmodels; i++) {
            struct dmodel *dm = &d->dm[i];
            if (dm->stopper == p) { /* its stop command ended; the model may still be going */
                dm->stopper = 0;
                bool failed = !WIFEXITED(status) || WEXITSTATUS(status);
                if (failed && dm->pid > 0 && super_alive(dm->pid, dm->start)) {
                    log_msg(LOG_LV_WARN, "%s: its stop command failed (status %d): SIGTERM",
                            dm->cfg.name, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
                    stop_signal(dm);
                } else if (dm->pid > 0 && super_alive(dm->pid, dm->start)) {
                    dm->stopper = -1; /* done: the model has until the deadline to go */
                }
                continue;
            }
            if (d->dm[i].pid != p)
                continue;
            char how[64];
            if (WIFEXITED(status))
                snprintf(how, sizeof how, "exited with status %d%s", WEXITSTATUS(status),
                         WEXITSTATUS(status) == 127             ? " (command not found)"
                         : WEXITSTATUS(status) == SUPER_NO_USER ? " (not run: not as its user)"
                                                                : "");
            else
                snprintf(how, sizeof how, "killed by signal %d", WTERMSIG(status));
            exited(d, (unsigned)i, how);
        }
    }
}

/* ---- the clock and the snapshot ---- */

void daemon_refresh(struct daemon *d)
{
    uint64_t gen = 0;
    if (d->sampler)
        gen = d->snap_gen = sampler_take(d->sampler, &d->snap);
    else
        probe_sample(d->probe, &d->snap, PROBE_PROCS, clock_wall_ms());
    for (size_t g = 0; g < d->snap.ngpus && g < d->sched.ngpus; g++) {
        const struct snap_gpu *sg = &d->snap.gpus[g];
        uint64_t ours = 0;
        for (size_t k = 0; k < sg->nprocs; k++)
            if (daemon_model_of_pid(d, sg->procs[k].pid) >= 0)
                ours += sg->procs[k].used;
        uint64_t used = sg->mem.version == 2 ? sg->mem.used : sg->mem.used - sg->mem.reserved;
        d->held_by_others[g] = used > ours ? used - ours : 0;
    }
    promised_apply(d); /* and what others' slices promise, as if they held it */
    promised_note(d);
    /* cgroups of models whose last processes were still dying when they ended */
    pid_t live[CONFIG_MAX_MODELS];
    size_t nlive = 0;
    for (size_t i = 0; i < d->sched.nmodels; i++)
        if (d->dm[i].pid > 0)
            live[nlive++] = d->dm[i].pid;
    family_sweep(live, nlive);
    /* adopted processes are not our children: look for them */
    for (size_t i = 0; i < d->sched.nmodels; i++)
        if (!d->dm[i].child && d->dm[i].pid > 0 && !super_alive(d->dm[i].pid, d->dm[i].start))
            exited(d, (unsigned)i, "gone");
    for (size_t i = 0; i < d->sched.nmodels; i++)
        if (d->dm[i].measure_gen && gen >= d->dm[i].measure_gen)
            measured(d, (unsigned)i);
}

/* The state for the event stream's live listeners (the dashboard): made
 * once a second from the snapshot just taken, whoever listens. */
static void live_state(struct daemon *d)
{
    if (!events_live_listeners(d->events))
        return;
    json_t *snap = render_json(&d->snap), *models = api_models_json(d);
    char *a = snap ? json_dumps(snap, JSON_COMPACT | RENDER_JSON_REALS) : NULL;
    char *b = models ? json_dumps(models, JSON_COMPACT | RENDER_JSON_REALS) : NULL;
    if (a && b)
        events_live(d->events, a, b);
    free(a);
    free(b);
    json_decref(snap);
    json_decref(models);
}

/* The sampler has a new snapshot. */
static void on_snapshot(void *arg)
{
    struct daemon *d = arg;
    loopwatch_begin("taking in a GPU snapshot");
    d->last_snap_ms = daemon_now_ms();
    daemon_refresh(d);
    live_state(d);
    loopwatch_end();
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct daemon *d = arg;
    loopwatch_begin("the clock's tick");
    reap(d);
    struct sched_event e = {.kind = SCHED_EV_TICK};
    daemon_step(d, &e);
    fflush(stderr);
    loopwatch_end();
    if (d->quitting) {
        bool any = false;
        for (size_t i = 0; i < d->sched.nmodels; i++)
            any |= d->dm[i].pid > 0 && super_alive(d->dm[i].pid, d->dm[i].start);
        if (!any)
            event_base_loopbreak(d->base);
    }
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    struct daemon *d = arg;
    if (sig == SIGCHLD) {
        reap(d);
        return;
    }
    if (d->quitting) { /* a second ^C: now */
        event_base_loopbreak(d->base);
        return;
    }
    log_msg(LOG_LV_NOTICE, "stopping the models, then exiting");
    notify_send("STOPPING=1");
    d->quitting = true;
    for (size_t i = 0; i < d->sched.nmodels; i++) {
        struct sched_event e = {.kind = SCHED_EV_UNLOAD, .model = (unsigned)i};
        daemon_step(d, &e);
    }
}

int daemon_loop(struct daemon *d)
{
    static const int sigs[] = {SIGCHLD, SIGTERM, SIGINT}; /* SIGHUP: reload.c's */
    for (int k = 0; k < 3; k++) {
        d->sig[k] = evsignal_new(d->base, sigs[k], on_signal, d);
        if (!d->sig[k] || evsignal_add(d->sig[k], NULL) < 0)
            return -1;
    }
    signal(SIGPIPE, SIG_IGN);
    d->tick = event_new(d->base, -1, EV_PERSIST, on_tick, d);
    struct timeval tv = {0, TICK_MS * 1000};
    if (!d->tick || event_add(d->tick, &tv) < 0 || loopwatch_start(d->base) < 0)
        return -1;
    /* from now on the probe is the sampler's, on its thread */
    d->sampler = sampler_start(d->base, d->probe, SNAP_MS, on_snapshot, d);
    if (!d->sampler)
        return -1;
    int rc = event_base_dispatch(d->base);
    sampler_stop(d->sampler);
    d->sampler = NULL;
    return rc;
}

int daemon_init(struct daemon *d)
{
    d->events = events_new();
    d->worker = worker_new(d->base, moves_job, d, moves_done, d);
    return d->events && d->worker ? 0 : -1;
}

void daemon_init_model(struct daemon *d, unsigned i)
{
    d->dm[i].d = d;
    d->dm[i].index = i;
    if (!d->dm[i].timer)
        d->dm[i].timer = evtimer_new(d->base, on_timer, &d->dm[i]);
}
