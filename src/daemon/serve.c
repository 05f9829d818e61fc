/* serve: `vram serve` from its configuration to its loop: the daemon's
 * parts set in its table (daemonops.h), the store, the GPU snapshot, the
 * checkpoint library and libvramcap found, the model table made, the
 * processes a previous daemon left running adopted (same pid, same start
 * time; suspended ones too, others it recorded forgotten), then the
 * control API and the proxy listen. */
#include "daemon/serve.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "host/clock.h"
#include "host/proc.h"
#include "app/log.h"
#include "app/paths.h"
#include "app/selfpath.h"
#include "app/store.h"
#include "core/units.h"
#include "daemon/api.h"
#include "daemon/daemon.h"
#include "daemon/daemonops.h"
#include "conf/confstores.h"
#include "conf/confuser.h"
#include "daemon/discover.h"
#include "daemon/disktier.h"
#include "daemon/emit.h"
#include "daemon/events.h"
#include "daemon/hostpool.h"
#include "host/meminfo.h"
#include "daemon/mgroup.h"
#include "daemon/moves.h"
#include "daemon/names.h"
#include "daemon/precheck.h"
#include "daemon/procs.h"
#include "daemon/promised.h"
#include "host/notify.h"
#include "proxy/proxy.h"
#include "daemon/super.h"
#include "daemon/reload.h"
#include "daemon/report.h"
#include "daemon/runloop.h"
#include "daemon/table.h"
#include "daemon/toproxy.h"
#include "move/ckpt.h"
#include "move/worker.h"
#include "probe/probe.h"

/* ---- the daemon's parts, as its scheduler step calls them (daemonops.h) ---- */

static unsigned waiting(struct daemon *d, unsigned i)
{
    return proxy_waiting(d->proxy, i);
}

static void stepped(struct daemon *d, uint64_t now_ms)
{
    if (d->api) /* none yet while adopting */
        api_states_changed(d->api, now_ms);
}

static void settled(struct daemon *d)
{
    moves_plan(d);
    runloop_wake(d);
}

static const struct daemonops parts = {
    .place = promised_apply,
    .waiting = waiting,
    .changed = report_change,
    .start = procs_start,
    .stop = procs_stop,
    .move = moves_start,
    .stepped = stepped,
    .settled = settled,
};

/* The parts the loop needs before anything listens: the event stream and
 * the worker that carries out moves. 0, or -1. */
static int parts_init(struct daemon *d)
{
    d->events = events_new();
    d->worker = worker_new(d->base, moves_job, d, moves_done, d);
    return d->events && d->worker ? 0 : -1;
}

/* preload = : the models started with the daemon (llama-swap's
 * hooks.on_startup.preload), each a demand as vram load makes; what came
 * of it goes to the log. */
static void preloaded(void *arg, unsigned model)
{
    struct daemon *d = arg;
    log_msg(LOG_LV_NOTICE, "%s: preloaded", d->smodels[model].name);
}

static void not_preloaded(void *arg, unsigned model, enum sched_refusal why, const char *text)
{
    struct daemon *d = arg;
    (void)why;
    log_msg(LOG_LV_WARN, "%s: not preloaded: %s", d->smodels[model].name, text);
}

static void preload(struct daemon *d)
{
    static const struct demand_ops ops = {preloaded, not_preloaded};
    for (unsigned k = 0; k < d->cfg.npreload; k++) {
        int i = names_find(d, d->cfg.preload[k]);
        if (i >= 0 && !daemon_demand(d, (unsigned)i, false,
                                     (uint64_t)(d->dm[i].cfg.start_timeout_s * 1000) * 4, &ops, d,
                                     NULL, "preload"))
            log_msg(LOG_LV_WARN, "%s: not preloaded: too many demands", d->cfg.preload[k]);
    }
}

static void set_gpus(struct daemon *d)
{
    d->sched.ngpus = d->snap.ngpus < SCHED_MAX_GPUS ? d->snap.ngpus : SCHED_MAX_GPUS;
    for (size_t g = 0; g < d->sched.ngpus; g++) {
        const struct snap_gpu *sg = &d->snap.gpus[g];
        snprintf(d->gpu_uuid[g], sizeof d->gpu_uuid[g], "%s", sg->uuid);
        snprintf(d->gpu_name[g], sizeof d->gpu_name[g], "%s", sg->name);
        uint64_t all = sg->mem.total > sg->mem.reserved + d->cfg.margin
                           ? sg->mem.total - sg->mem.reserved - d->cfg.margin
                           : 0;
        d->sched.gpus[g].capacity = all;
        d->sched.gpus[g].budget = d->cfg.budget_set[g] ? d->cfg.budget[g] : 0;
    }
}

/* The user model i runs as, by its configuration. */
static uid_t user_of(const struct daemon *d, int i)
{
    return i >= 0 && d->dm[i].cfg.run.on ? d->dm[i].cfg.run.uid : geteuid();
}

static void adopt(struct daemon *d)
{
    struct store_proc v[CONFIG_MAX_MODELS * 2];
    size_t n = store_procs(d->store, v, sizeof v / sizeof v[0]);
    for (size_t k = 0; k < n; k++) {
        int i = daemon_model_index(d, v[k].model);
        bool alive = super_alive(v[k].pid, v[k].start);
        /* the user it runs as now (a previous configuration's, maybe) */
        uint32_t uid = (uint32_t)user_of(d, i);
        if (alive)
            hostproc_uid((uint32_t)v[k].pid, &uid);
        if (i < 0 || !alive || !strcmp(v[k].state, "starting") || v[k].gpu < 0 ||
            (size_t)v[k].gpu >= d->sched.ngpus) {
            if (alive)
                super_signal(v[k].pid, (uid_t)uid, SIGKILL); /* half started, or gone */
            mgroup_remove(v[k].pid, v[k].start, (uid_t)uid);
            store_del_proc(d->store, v[k].model);
            continue;
        }
        struct sched_model *m = &d->smodels[i];
        struct dmodel *dm = &d->dm[i];
        dm->pid = v[k].pid;
        dm->start = v[k].start;
        dm->uid = (uid_t)uid;
        dm->port = v[k].port;
        dm->child = false;
        snprintf(dm->how, sizeof dm->how, "%s", v[k].how);
        uint32_t gpus = v[k].gpus ? v[k].gpus : 1u << v[k].gpu;
        if (!strcmp(v[k].state, "suspended")) {
            m->state = SCHED_SUSPENDED;
            m->host_bytes = dm->host_bytes = v[k].bytes;
            dm->out_wall_ms = clock_wall_ms(); /* as far as this daemon knows */
            dm->left_gpu = v[k].gpu;
            dm->left_gpus = gpus;
            if (!strcmp(v[k].how, "fast")) /* it comes back only where it left */
                m->bound = gpus;
        } else {
            m->state = SCHED_READY;
            m->gpu = v[k].gpu;
            m->gpus = gpus;
            if (v[k].bytes > m->need)
                m->need = v[k].bytes;
        }
        m->last_used_ms = m->resident_ms = daemon_now_ms();
        emit_event(d, (unsigned)i, "adopted", 0, v[k].state);
    }
}

/* The host memory fast swap copies into: chunks made as suspends need
 * them, within host_budget (daemon/hostpool.h). Nothing is taken now but
 * the spare for the first switch, populated in the background. */
static void open_pool(struct daemon *d)
{
    uint64_t largest = 0;
    for (size_t i = 0; i < d->sched.nmodels; i++)
        if (d->dm[i].cfg.fast && d->dm[i].cfg.evict == SCHED_EVICT_SUSPEND &&
            d->smodels[i].need > largest)
            largest = d->smodels[i].need;
    char a[32], b[32], err[256];
    if (!largest || !d->shim[0])
        return;
    d->pool = hostpool_open(d->sched.host_budget, largest, err, sizeof err);
    if (!d->pool) {
        log_msg(LOG_LV_WARN, "no host memory for fast swap (%s): each model pins its own", err);
        return;
    }
    struct hostpool_stats st;
    hostpool_stats(d->pool, &st);
    log_msg(LOG_LV_INFO,
            "host memory for fast swap: up to %s (host_budget), in chunks of %s, taken as "
            "models are suspended",
            units_fmt_size(st.limit, a, sizeof a), units_fmt_size(st.chunk, b, sizeof b));
    if (!d->cfg.spill[0])
        return;
    d->disk = disktier_open(d->cfg.spill, d->cfg.spill_budget, err, sizeof err);
    if (!d->disk) {
        log_msg(LOG_LV_WARN, "no disk tier (%s): past host_budget, models are stopped", err);
        return;
    }
    d->sched.spill_budget = disktier_budget(d->disk);
    log_msg(LOG_LV_INFO,
            "disk tier: up to %s in %s (spill_budget), for what host memory cannot hold",
            units_fmt_size(d->sched.spill_budget, a, sizeof a), disktier_dir(d->disk));
}

/* host_budget's default: what RAM is available now, less a margin for
 * what else starts (a sixteenth of it, at least 2 GiB): half of RAM, the
 * old default, left models stopped on a machine with little else to do and
 * swapped the machine where other programs hold more than half. The
 * pool's limit follows RAM as it runs short later (moves.c). */
static uint64_t default_host_budget(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t ram = (uint64_t)pages * (uint64_t)page, avail = meminfo_available();
    if (avail == UINT64_MAX || avail > ram)
        avail = ram;
    uint64_t margin = ram / 16 > (2ULL << 30) ? ram / 16 : (2ULL << 30);
    return avail > margin ? avail - margin : avail / 2;
}

int serve_find_vramcap(const struct config *c, char *shim, size_t len, char *why, size_t wlen,
                       char *err, size_t errlen)
{
    why[0] = '\0';
    if (selfpath_libvramcap(shim, len, why, wlen) == 0)
        return 0;
    shim[0] = '\0';
    for (size_t i = 0; i < c->nmodels; i++)
        if (config_uses_vramcap(&c->models[i])) {
            snprintf(err, errlen, "model %s runs under libvramcap (%s), but %s", c->models[i].name,
                     c->models[i].cap ? "cap = yes" : "swap = fast", why);
            return -1;
        }
    return 0;
}

int serve_check_users(const struct config *c, const char *shim, char *err, size_t len)
{
    for (size_t i = 0; i < c->nmodels; i++) {
        char warn[600];
        if (confuser_check_files(&c->models[i], shim, warn, sizeof warn, err, len) < 0)
            return -1;
        if (warn[0])
            log_msg(LOG_LV_WARN, "%s", warn);
    }
    return 0;
}

/* The folders of the socket, the state and the logs, made where they are
 * missing (the service's units make the system daemon's; a user's are
 * private), each one this user may write in: 0, or -1 with err naming the
 * setting and the fix. */
static int make_folders(const struct config *c, char *err, size_t len)
{
    struct paths def;
    paths_default(&def);
    unsigned mode = getuid() == 0 ? 0755 : 0700;
    char logfile[CONFIG_PATH_MAX + 8];
    snprintf(logfile, sizeof logfile, "%s/x", c->logs); /* the folder itself */
    const struct {
        const char *key, *value, *in, *def;
    } f[] = {{"socket", c->socket, c->socket, def.socket},
             {"state", c->state, c->state, def.state},
             {"logs", c->logs, logfile, def.logs}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        char dir[CONFIG_PATH_MAX + 8];
        snprintf(dir, sizeof dir, "%s", f[i].in);
        char *slash = strrchr(dir, '/');
        if (!slash)
            snprintf(dir, sizeof dir, ".");
        else
            slash[slash == dir] = '\0';
        int made = paths_make_parent(f[i].in, mode);
        if (made == 0 && access(dir, W_OK | X_OK) == 0)
            continue;
        int e = errno;
        bool there = access(dir, F_OK) == 0;
        char fix[300];
        if (strcmp(f[i].value, f[i].def) && getuid() != 0)
            snprintf(fix, sizeof fix,
                     ": as a user, leave %s out of [serve] (yours is then %s), or name a folder "
                     "you may write in",
                     f[i].key, f[i].def);
        else
            snprintf(fix, sizeof fix, ": give %s = PATH in [serve], in a folder you may write in",
                     f[i].key);
        snprintf(err, len, "%s: %s = %s: cannot %s %s (%s)%s", c->path, f[i].key, f[i].value,
                 there ? "write in" : "make", dir, strerror(e), fix);
        return -1;
    }
    return 0;
}

/* Everything vram serve does before it runs a model: the configuration,
 * libvramcap, the folders, the state, the GPUs, the sizes, the listeners.
 * With check, nothing a running daemon owns is touched (no adoption, no
 * group files swept, no host pool) and the listeners are let go again:
 * what vram serve --check runs, so that it fails exactly when vram serve
 * would, with the same message. *input: the configuration was at fault. */
static int start(struct daemon *d, const char *config_path, bool check, bool *input, char *why,
                 size_t wlen, char *err, size_t len)
{
    d->ops = &parts;
    *input = true;
    if (config_load(config_path, &d->cfg, err, len) < 0 ||
        config_check_socket(&d->cfg, err, len) < 0 || confstores_add(&d->cfg, err, len) < 0 ||
        confuser_resolve(&d->cfg, err, len) < 0)
        return -1;
    *input = false;
    /* before the state: a second daemon on this configuration adopts
     * (and kills the half-started of) nothing of the first's */
    if (api_other_answers(d->cfg.socket)) {
        snprintf(err, len, "%s: another vram serve answers there already", d->cfg.socket);
        return -1;
    }
    if (serve_find_vramcap(&d->cfg, d->shim, sizeof d->shim, why, wlen, err, len) < 0 ||
        serve_check_users(&d->cfg, d->shim, err, len) < 0 || make_folders(&d->cfg, err, len) < 0)
        return -1;
    log_msg(LOG_LV_DEBUG, "configuration %s: socket %s, state %s, logs %s", config_path,
            d->cfg.socket, d->cfg.state, d->cfg.logs);
    /* the changelist folds the enable/disable pairs a proxied request makes
     * on its two connections into one epoll_ctl each (measured: 10 calls
     * per request without it) */
    struct event_config *ec = event_config_new();
    if (ec)
        event_config_set_flag(ec, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
    d->base = ec ? event_base_new_with_config(ec) : NULL;
    if (ec)
        event_config_free(ec);
    d->disc = calloc(1, sizeof *d->disc);
    if (!d->base || !d->disc || parts_init(d) < 0) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    if (store_open(&d->store, d->cfg.state, err, len) < 0 ||
        probe_open(&d->probe, "/proc", err, len) < 0)
        return -1;
    if (ckpt_open(&d->ckpt, d->ckpt_why, sizeof d->ckpt_why) < 0)
        d->ckpt = NULL;
    probe_sample(d->probe, &d->snap, PROBE_PROCS | PROBE_CUDA, clock_wall_ms());
    set_gpus(d);
    if (!d->sched.ngpus) {
        snprintf(err, len, "no GPU to serve on");
        return -1;
    }
    if (table_check_sizes(d, &d->cfg, err, len) < 0) {
        *input = true;
        return -1;
    }
    if (check && d->cfg.spill[0] && disktier_check(d->cfg.spill, err, len) < 0)
        return -1;
    if (check) /* the listeners, bound and let go (the socket file removed) */
        return api_listen(d, &d->api, err, len) < 0 || toproxy_listen(d, err, len) < 0
                   ? -1
                   : 0;
    return 0;
}

/* Who the models run as, each user once with how many: "vram-model (2
 * models), alice (1 model)". */
static void say_users(const struct config *c, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < c->nmodels; i++) {
        const struct runas *r = &c->models[i].run;
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = runas_same(&c->models[k].run, r);
        if (seen)
            continue;
        unsigned n = 0;
        for (size_t k = i; k < c->nmodels; k++)
            n += runas_same(&c->models[k].run, r);
        int w = snprintf(out + at, len - at, "%s%s (%u model%s)", at ? ", " : "",
                         r->on ? r->name : "its own user", n, n == 1 ? "" : "s");
        if (w < 0 || (size_t)w >= len - at)
            break;
        at += (size_t)w;
    }
}

int serve_check(const char *config_path, struct serve_summary *sum, bool *input, char *err,
                size_t len)
{
    memset(sum, 0, sizeof *sum);
    /* as serve_run's: never torn down, the process exits after */
    static struct daemon *d;
    d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    int rc = start(d, config_path, true, input, sum->shim_why, sizeof sum->shim_why, err, len);
    api_remove_socket(d->api);
    if (rc == 0 && (sum->nproblems = precheck_models(&d->cfg, sum->problems, sizeof sum->problems))) {
        snprintf(err, len, "%zu problem%s above: the model%s named would fail at %s "
                 "first request, though the daemon itself would start",
                 sum->nproblems, sum->nproblems > 1 ? "s" : "", sum->nproblems > 1 ? "s" : "",
                 sum->nproblems > 1 ? "their" : "its");
        rc = -1;
    }
    sum->nmodels = d->cfg.nmodels;
    sum->ngpus = d->sched.ngpus;
    snprintf(sum->socket, sizeof sum->socket, "%s", d->cfg.socket);
    snprintf(sum->state, sizeof sum->state, "%s", d->cfg.state);
    snprintf(sum->logs, sizeof sum->logs, "%s", d->cfg.logs);
    snprintf(sum->shim, sizeof sum->shim, "%s", d->shim);
    snprintf(sum->notes, sizeof sum->notes, "%s", d->cfg.notes);
    snprintf(sum->from_env, sizeof sum->from_env, "%s", d->cfg.from_env);
    say_users(&d->cfg, sum->users, sizeof sum->users);
    /* the process exits next: the kernel takes back the rest */
    store_close(d->store);
    if (d->probe) {
        probe_exiting(d->probe);
        probe_close(d->probe);
    }
    return rc;
}

/* Every address the daemon answers on, in the line that says it is up. */
static void log_addresses(const struct daemon *d)
{
    char proxy[400] = "", metrics[200] = "";
    const char *l = d->cfg.listen, *dash = proxy_dashboard(d->proxy);
    /* the dashboard's page asks for the token, or the session vram ui gives it */
    if (l[0])
        snprintf(proxy, sizeof proxy, "; proxy http://%s (OpenAI /v1, Ollama /api)%s%s%s", l,
                 dash ? "; dashboard " : "", dash ? dash : "",
                 !dash             ? ""
                 : d->cfg.keys.n ? "/ui (with the token, or run vram ui)"
                                 : "/ui (run vram ui: it opens it signed in)");
    if (d->cfg.metrics[0])
        snprintf(metrics, sizeof metrics, "; metrics http://%s/metrics", d->cfg.metrics);
    log_msg(LOG_LV_NOTICE, "%zu models, %zu GPUs, listening on %s%s%s", d->sched.nmodels,
            d->sched.ngpus, d->cfg.socket, proxy, metrics);
}

int serve_run(const char *config_path, char *err, size_t len)
{
    notify_init();
    /* Nothing of the daemon's is another process's to read: not its
     * memory, not its descriptors (the chunks of host memory that hold
     * suspended models' bytes), not through /proc/PID/fd or mem, even for
     * a model of the same user (a user's daemon). No core dump either: it
     * would hold them too. */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    /* one daemon per process, never torn down: the process exits after */
    static struct daemon *d;
    d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    int rc = -1;
    bool input;
    char why[600];
    /* a log line per proxied request: written in blocks, flushed every tick */
    static char logbuf[64 * 1024];
    setvbuf(stderr, logbuf, _IOFBF, sizeof logbuf);
    if (start(d, config_path, false, &input, why, sizeof why, err, len) < 0)
        goto out;
    if (!d->ckpt)
        log_msg(LOG_LV_WARN, "suspend falls back to stop: %s", d->ckpt_why);
    if (d->shim[0])
        log_msg(LOG_LV_INFO, "libvramcap: %s", d->shim);
    else
        log_msg(LOG_LV_WARN,
                "no model uses libvramcap now, and a reload that adds one with a cap or fast "
                "swap will be refused: %s",
                why);
    d->sched.host_budget = d->host_budget =
        d->cfg.host_budget ? d->cfg.host_budget : default_host_budget();
    d->sched.min_resident_ms = (uint64_t)(d->cfg.min_resident_s * 1000);
    d->sched.min_resident_auto = d->cfg.min_resident_auto;
    d->sched.overlap = d->cfg.overlap;
    d->sched.preempt_gap_ms = (uint64_t)(d->cfg.preempt_gap_s * 1000);
    d->sched.max_loaded = d->cfg.max_loaded;
    d->sched.max_loaded_gpu = d->cfg.max_loaded_gpu;
    d->sched.max_failures = 3;
    d->sched.backoff_ms = 1000;
    d->sched.models = d->smodels;
    for (size_t i = 0; i < d->cfg.nmodels; i++)
        table_add(d, &d->cfg.models[i]);
    static char problems[4096]; /* one daemon per process */
    if (precheck_models(&d->cfg, problems, sizeof problems))
        for (char *l = problems, *e; l; l = e ? e + 1 : NULL) {
            e = strchr(l, '\n');
            log_msg(LOG_LV_WARN, "%.*s", e ? (int)(e - l) : (int)strlen(l), l);
        }
    adopt(d);
    uid_t users[CONFIG_MAX_MODELS];
    for (size_t i = 0; i < d->cfg.nmodels; i++)
        users[i] = user_of(d, (int)i);
    mgroup_sweep(users, d->cfg.nmodels); /* the slices of models that died while no daemon ran */
    open_pool(d);
    procs_refresh(d); /* what others use, before the first decision */
    if (api_listen(d, &d->api, err, len) < 0 || toproxy_listen(d, err, len) < 0)
        goto out;
    if (d->cfg.notes[0])
        log_msg(LOG_LV_WARN, "%s", d->cfg.notes);
    if (d->cfg.from_env[0])
        log_msg(LOG_LV_NOTICE, "from the environment (the file does not say): %s",
                d->cfg.from_env);
    preload(d);
    log_addresses(d);
    char st[160];
    snprintf(st, sizeof st, "READY=1\nSTATUS=%zu models, %zu GPUs", d->sched.nmodels,
             d->sched.ngpus);
    notify_send(st);
    rc = reload_listen(d) < 0 || runloop_run(d) < 0 ? -1 : 0;
    api_remove_socket(d->api);
    proxy_exiting(d->proxy);
out:
    /* the process exits next: the kernel takes back the rest */
    store_close(d->store);
    if (d->probe) {
        probe_exiting(d->probe);
        probe_close(d->probe);
    }
    return rc;
}
