/* procs: each model's process, as the supervisor runs it: started (a
 * free port, its GPUs by UUID, its group files, its record in the store
 * before it runs anything), polled for health until it answers and the
 * snapshot has measured it, stopped (its stop command, SIGTERM, SIGKILL
 * after a grace period), and reaped or, adopted, found gone. What comes of
 * each goes to the scheduler as an event (daemon_step, daemon_post). */
#include "daemon/procs.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/clock.h"
#include "app/log.h"
#include "daemon/discover.h"
#include "http/health.h"
#include "daemon/mgroup.h"
#include "daemon/modelfd.h"
#include "daemon/promised.h"
#include "proxy/proxy.h"
#include "daemon/report.h"
#include "probe/sampler.h"
#include "daemon/super.h"
#include "daemon/testpoint.h"
#include "host/family.h"
#include "probe/probe.h"

#define STOP_GRACE_MS 10000

static void on_timer(evutil_socket_t fd, short what, void *arg);

static void arm(struct dmodel *dm, uint64_t ms)
{
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
    evtimer_add(dm->timer, &tv);
}

void procs_start(struct daemon *d, unsigned i, int gpu)
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

void procs_stop(struct daemon *d, unsigned i)
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
        procs_refresh(d);
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

void procs_reap(struct daemon *d)
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

/* ---- the snapshot ---- */

void procs_refresh(struct daemon *d)
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

bool procs_any_alive(const struct daemon *d)
{
    bool any = false;
    for (size_t i = 0; i < d->sched.nmodels; i++)
        any |= d->dm[i].pid > 0 && super_alive(d->dm[i].pid, d->dm[i].start);
    return any;
}

void procs_init_model(struct daemon *d, unsigned i)
{
    d->dm[i].d = d;
    d->dm[i].index = i;
    if (!d->dm[i].timer)
        d->dm[i].timer = evtimer_new(d->base, on_timer, &d->dm[i]);
}
