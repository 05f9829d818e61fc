/* setup: a daemon from its configuration. Each model's size comes from
 * its vram setting, else what it used last time on this kind of GPU (the
 * store), else `vram fit`'s estimate from its file. Models that a previous
 * daemon left running (same pid, same start time) are adopted as they
 * are, suspended ones included; others it recorded are forgotten. */
#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/selfpath.h"
#include "core/estimate.h"
#include "daemon/daemon.h"
#include "park/ckpt.h"
#include "model/modelfile.h"
#include "probe/probe.h"
#include "app/store.h"
#include "daemon/super.h"

static uint64_t need_of(struct daemon *d, const struct config_model *m)
{
    if (m->vram)
        return m->vram;
    uint64_t b = store_footprint(d->store, m->name, d->gpu_name[m->gpu >= 0 ? m->gpu : 0]);
    if (b)
        return b;
    struct model_info info;
    char err[256];
    if (modelfile_load(m->file, &info, err, sizeof err) < 0) {
        fprintf(stderr,
                "vram serve: %s: cannot estimate from %s (%s): counting 1 GiB until "
                "it runs\n",
                m->name, m->file, err);
        return 1ULL << 30;
    }
    struct estimate_opts o;
    estimate_defaults(&o);
    size_t n = strlen(m->file);
    o.runtime = n > 5 && !strcmp(m->file + n - 5, ".gguf") ? ESTIMATE_LLAMACPP : ESTIMATE_TORCH;
    struct estimate_precision p[8];
    struct estimate_result r;
    if (estimate_candidates(&info, p, 8) < 1)
        return 1ULL << 30;
    estimate_compute(&info, &o, &p[0], &r);
    return r.total;
}

static void set_model(struct daemon *d, unsigned i, const struct config_model *c)
{
    struct sched_model *m = &d->smodels[i];
    d->dm[i].cfg = *c;
    snprintf(m->name, sizeof m->name, "%s", c->name);
    m->need = need_of(d, c);
    m->priority = c->priority;
    m->idle_ms = (uint64_t)(c->idle_s * 1000);
    m->evict = c->evict;
    m->only_gpu = c->gpu;
    m->pinned = c->pinned;
}

static void add_model(struct daemon *d, const struct config_model *c)
{
    unsigned i = (unsigned)d->sched.nmodels++;
    memset(&d->smodels[i], 0, sizeof d->smodels[i]);
    memset(&d->dm[i], 0, sizeof d->dm[i]);
    d->smodels[i].gpu = d->smodels[i].resume_gpu = d->smodels[i].bound_gpu = -1;
    d->dm[i].left_gpu = -1;
    set_model(d, i, c);
    daemon_init_model_timer(d, i);
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
        d->sched.gpus[g].capacity =
            d->cfg.budget_set[g] && d->cfg.budget[g] < all ? d->cfg.budget[g] : all;
    }
}

static void adopt(struct daemon *d)
{
    struct store_proc v[CONFIG_MAX_MODELS * 2];
    size_t n = store_procs(d->store, v, sizeof v / sizeof v[0]);
    for (size_t k = 0; k < n; k++) {
        int i = daemon_model_index(d, v[k].model);
        bool alive = super_alive(v[k].pid, v[k].start);
        if (i < 0 || !alive || !strcmp(v[k].state, "starting") || v[k].gpu < 0 ||
            (size_t)v[k].gpu >= d->sched.ngpus) {
            if (alive)
                super_signal(v[k].pid, SIGKILL); /* half started, or no longer configured */
            store_del_proc(d->store, v[k].model);
            continue;
        }
        struct sched_model *m = &d->smodels[i];
        struct dmodel *dm = &d->dm[i];
        dm->pid = v[k].pid;
        dm->start = v[k].start;
        dm->port = v[k].port;
        dm->child = false;
        snprintf(dm->how, sizeof dm->how, "%s", v[k].how);
        if (!strcmp(v[k].state, "suspended")) {
            m->state = SCHED_SUSPENDED;
            m->host_bytes = dm->host_bytes = v[k].bytes;
            dm->left_gpu = v[k].gpu;
        } else {
            m->state = SCHED_READY;
            m->gpu = v[k].gpu;
            if (v[k].bytes > m->need)
                m->need = v[k].bytes;
        }
        m->last_used_ms = daemon_now_ms();
        daemon_emit(d, (unsigned)i, "adopted", 0, v[k].state);
    }
}

void daemon_reload(struct daemon *d)
{
    struct config *c = malloc(sizeof *c);
    char err[512];
    if (!c)
        return;
    if (config_load(d->cfg.path, c, err, sizeof err) < 0) {
        fprintf(stderr, "vram serve: reload refused, the running configuration stays: %s\n", err);
        free(c);
        return;
    }
    for (size_t i = 0; i < d->sched.nmodels; i++) {
        if (d->dm[i].removed)
            continue;
        const struct config_model *nm = NULL;
        for (size_t k = 0; k < c->nmodels; k++)
            if (!strcmp(c->models[k].name, d->smodels[i].name))
                nm = &c->models[k];
        bool changed = nm && (strcmp(nm->command, d->dm[i].cfg.command) ||
                              nm->vram != d->dm[i].cfg.vram || nm->gpu != d->dm[i].cfg.gpu);
        if (changed && d->smodels[i].state == SCHED_BUSY) {
            d->dm[i].reconfigure = true; /* not mid-request: once it is released */
        } else if (!nm || changed) {     /* stopped now; starts again on demand */
            struct sched_event e = {.kind = SCHED_EV_UNLOAD, .model = (unsigned)i};
            daemon_step(d, &e);
        }
        if (!nm)
            d->dm[i].removed = true;
        else
            set_model(d, (unsigned)i, nm);
    }
    for (size_t k = 0; k < c->nmodels; k++)
        if (daemon_model_index(d, c->models[k].name) < 0 && d->sched.nmodels < CONFIG_MAX_MODELS)
            add_model(d, &c->models[k]);
    memcpy(d->cfg.models, c->models, sizeof c->models);
    d->cfg.nmodels = c->nmodels;
    /* what the proxy reads per request follows the file; the addresses it
     * listens on stay until a restart */
    memcpy(d->cfg.token, c->token, sizeof c->token);
    d->cfg.wait_s = c->wait_s;
    fprintf(stderr, "vram serve: configuration reloaded (%zu models)\n", c->nmodels);
    free(c);
}

int daemon_run(const char *config_path, char *err, size_t len)
{
    struct daemon *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    int rc = -1;
    if (config_load(config_path, &d->cfg, err, len) < 0)
        goto out;
    /* the changelist folds the enable/disable pairs a proxied request makes
     * on its two connections into one epoll_ctl each (measured: 10 calls
     * per request without it) */
    struct event_config *ec = event_config_new();
    if (ec)
        event_config_set_flag(ec, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
    d->base = ec ? event_base_new_with_config(ec) : NULL;
    if (ec)
        event_config_free(ec);
    /* a log line per proxied request: written in blocks, flushed every tick */
    static char logbuf[64 * 1024];
    setvbuf(stderr, logbuf, _IOFBF, sizeof logbuf);
    if (!d->base || store_open(&d->store, d->cfg.state, err, len) < 0)
        goto out;
    if (probe_open(&d->probe, "/proc", err, len) < 0)
        goto out;
    if (ckpt_open(&d->ckpt, d->ckpt_why, sizeof d->ckpt_why) < 0) {
        d->ckpt = NULL;
        fprintf(stderr, "vram serve: suspend falls back to stop: %s\n", d->ckpt_why);
    }
    static const char *const shim[] = {"libvramcap.so", "../lib/vram/libvramcap.so"};
    if (selfpath_find(shim, 2, d->shim, sizeof d->shim) < 0)
        d->shim[0] = '\0';
    probe_sample(d->probe, &d->snap, PROBE_PROCS, daemon_now_ms());
    set_gpus(d);
    if (!d->sched.ngpus) {
        snprintf(err, len, "no GPU to serve on");
        goto out;
    }
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    d->sched.host_budget =
        d->cfg.host_budget ? d->cfg.host_budget : (uint64_t)pages * (uint64_t)page / 2;
    d->sched.max_failures = 3;
    d->sched.backoff_ms = 1000;
    d->sched.models = d->smodels;
    for (size_t i = 0; i < d->cfg.nmodels; i++)
        add_model(d, &d->cfg.models[i]);
    adopt(d);
    daemon_refresh(d); /* what others use, before the first decision */
    if (worker_init(d) < 0 || api_listen(d, err, len) < 0 || proxy_listen(d, err, len) < 0)
        goto out;
    fprintf(stderr, "vram serve: %zu models, %zu GPUs, listening on %s\n", d->sched.nmodels,
            d->sched.ngpus, d->cfg.socket);
    rc = daemon_loop(d) < 0 ? -1 : 0;
    unlink(d->cfg.socket);
out:
    /* the process exits next: the kernel takes back the rest */
    store_close(d->store);
    if (d->probe) {
        probe_exiting(d->probe);
        probe_close(d->probe);
    }
    return rc;
}
