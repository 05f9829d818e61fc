/* table: the model table's rows, from the configuration: a model's
 * scheduler entry and its supervisor's, and its size. The size comes from
 * its vram setting, else what it used last time on this kind of GPU (the
 * store), else `vram fit`'s estimate from its file. */
#include "daemon/table.h"

#include <stdio.h>
#include <string.h>

#include "app/log.h"
#include "app/store.h"
#include "core/estimate.h"
#include "daemon/discover.h"
#include "daemon/procs.h"
#include "model/modelfile.h"

/* What the model holds on each of its GPUs (vram is per GPU, as `vram run
 * --vram` is; an estimate is split evenly over them). */
static uint64_t need_of(struct daemon *d, const struct config_model *m)
{
    if (m->vram)
        return m->vram;
    if (m->source[0])
        return discover_need(d, m);
    int g = m->gpus ? __builtin_ctz(m->gpus) : 0;
    uint64_t b = store_footprint(d->store, m->name, d->gpu_name[g]);
    if (b)
        return b;
    struct model_info info;
    char err[256];
    if (modelfile_load(m->file, &info, err, sizeof err) < 0) {
        log_msg(LOG_LV_WARN, "%s: cannot estimate from %s (%s): counting 1 GiB until it runs",
                m->name, m->file, err);
        return 1ULL << 30;
    }
    struct estimate_opts o;
    estimate_defaults(&o);
    o.runtime = info.gguf ? ESTIMATE_LLAMACPP : ESTIMATE_TORCH; /* by its bytes, not its name */
    struct estimate_precision p[8];
    struct estimate_result r;
    if (estimate_candidates(&info, p, 8) < 1)
        return 1ULL << 30;
    estimate_compute(&info, &o, &p[0], &r);
    return r.total / (m->width ? m->width : 1);
}

int table_check_sizes(const struct daemon *d, const struct config *c, char *err, size_t len)
{
    uint64_t holds[SCHED_MAX_GPUS];
    char said[SCHED_MAX_GPUS * 60] = "";
    size_t at = 0;
    for (size_t g = 0; g < d->sched.ngpus; g++) {
        const struct sched_gpu *G = &d->sched.gpus[g];
        holds[g] = G->budget && G->budget < G->capacity ? G->budget : G->capacity;
        if (at < sizeof said)
            at += (size_t)snprintf(said + at, sizeof said - at, "%sGPU %zu (%.40s)", g ? ", " : "",
                                   g, d->gpu_name[g]);
    }
    return config_check_sizes(c, holds, d->sched.ngpus, said, err, len);
}

void table_set(struct daemon *d, unsigned i, const struct config_model *c)
{
    struct sched_model *m = &d->smodels[i];
    d->dm[i].cfg = *c;
    snprintf(m->name, sizeof m->name, "%s", c->name);
    m->need = need_of(d, c);
    m->priority = c->priority;
    m->keep_alive_ms = c->keep_alive_s < 0 ? SCHED_FOREVER : (uint64_t)(c->keep_alive_s * 1000);
    m->keep_ms = m->keep_alive_ms; /* a reload ends what requests asked for */
    /* preemption holds requests while fast swap moves the model: only
     * where fast swap is the path */
    m->preempt = c->preempt != 0 && c->fast && c->evict == SCHED_EVICT_SUSPEND && !c->pinned;
    m->slice_ms = (uint64_t)(c->slice_s * 1000);
    m->evict = c->evict;
    m->allowed = c->gpus;
    m->width = c->width;
    m->pinned = c->pinned;
}

void table_add(struct daemon *d, const struct config_model *c)
{
    unsigned i = (unsigned)d->sched.nmodels++;
    memset(&d->smodels[i], 0, sizeof d->smodels[i]);
    memset(&d->dm[i], 0, sizeof d->dm[i]);
    d->smodels[i].gpu = d->smodels[i].resume_gpu = -1;
    d->dm[i].left_gpu = -1;
    d->dm[i].spill_fd = -1;
    table_set(d, i, c);
    procs_init_model(d, i);
}

