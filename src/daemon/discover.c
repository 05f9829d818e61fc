/* discover: the stores' GGUF models (found by conf/confstores.c) as models
 * of the daemon: the context and -ngl are added at each start, from the
 * llama.cpp estimate (core/llamacpp.c, what `vram fit` says):
 *   - the context: what a request asked for, else discover_ctx (8192), at
 *     most what the model was trained for;
 *   - its size when the scheduler places it: every layer at that context,
 *     or what it measured there before; a model larger than a GPU takes
 *     the largest one whole;
 *   - at the start, the room it has on its GPU next to the models resident
 *     there (at least what the scheduler promised): every layer if they
 *     fit; else, when no request asked for the context, a shorter one (not
 *     under 2048) with every layer; else the most layers that fit. */
#include "daemon/discover.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/log.h"
#include "app/store.h"
#include "conf/confstores.h"
#include "core/err.h"
#include "core/llamacpp.h"
#include "core/modelname.h"
#include "core/units.h"
#include "daemon/daemon.h"
#include "model/modeldir.h"
#include "model/modelfile.h"

#define MIN_CTX 2048 /* a context shortened for the room goes no lower */

/* ---- sizing and starting them ---- */

/* The model's headers, read beneath its store (model/modeldir.h): a link
 * that leads out of it, put there since the store was read, is not
 * followed (daemon/modelfd.h says why). */
static int load_beneath(const struct config_model *m, struct model_info *info, char *err,
                        size_t len)
{
    if (m->file[m->store_len] != '/')
        return modelfile_load(m->file, info, err, len);
    char root[CONFIG_PATH_MAX], dir[CONFIG_PATH_MAX];
    snprintf(root, sizeof root, "%.*s", m->store_len ? (int)m->store_len : 1,
             m->store_len ? m->file : "/");
    snprintf(dir, sizeof dir, "%s", m->file + m->store_len + 1);
    char *slash = strrchr(dir, '/');
    const char *file = slash ? slash + 1 : dir;
    if (slash)
        *slash = '\0';
    int rfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct modeldir *d = rfd >= 0 ? malloc(sizeof *d) : NULL;
    if (!d) {
        snprintf(err, len, "%s: cannot open the store", root);
        if (rfd >= 0)
            close(rfd);
        return VRAM_EINPUT;
    }
    modeldir_beneath(d, rfd, root, slash ? dir : "");
    int rc = modelfile_load_at(d, file, info, err, len);
    free(d);
    close(rfd);
    return rc;
}

static struct model_info *info_of(const struct config_model *m)
{
    struct model_info *info = malloc(sizeof *info);
    char err[512];
    if (info && load_beneath(m, info, err, sizeof err) != VRAM_OK) {
        log_msg(LOG_LV_WARN, "%s: cannot read %s: %s", m->name, m->file, err);
        free(info);
        return NULL;
    }
    return info;
}

static unsigned target_ctx(const struct daemon *d, const struct config_model *m,
                           const struct model_info *info)
{
    if (m->ctx)
        return m->ctx;
    unsigned ctx = d->cfg.discover_ctx ? d->cfg.discover_ctx : DISCOVER_CTX;
    return info->max_ctx && info->max_ctx < ctx ? (unsigned)info->max_ctx : ctx;
}

/* vram fit's llama.cpp figure at ctx and ngl (-1: every layer), as stored. */
static uint64_t estimate(const struct model_info *info, unsigned ctx, int ngl,
                         struct estimate_opts *o, struct estimate_precision *p)
{
    struct estimate_precision cand[8];
    estimate_defaults(o);
    o->runtime = ESTIMATE_LLAMACPP;
    o->ctx = ctx;
    o->ngl = ngl;
    if (estimate_candidates(info, cand, 8) < 1)
        return 0;
    *p = cand[0];
    struct estimate_result r;
    estimate_compute(info, o, p, &r);
    return r.total;
}

/* What GPU g holds for models: its capacity, or its budget when less. */
static uint64_t holds(const struct daemon *d, size_t g)
{
    const struct sched_gpu *G = &d->sched.gpus[g];
    return G->budget && G->budget < G->capacity ? G->budget : G->capacity;
}

static void key_of(const char *name, unsigned ctx, char *out, size_t len)
{
    snprintf(out, len, "%s ctx=%u", name, ctx);
}

uint64_t discover_need(struct daemon *d, const struct config_model *m)
{
    struct model_info *info = info_of(m);
    if (!info)
        return 1ULL << 30; /* as table.c counts a file it cannot read */
    unsigned ctx = target_ctx(d, m, info);
    char key[MODELNAME_MAX + 32];
    key_of(m->name, ctx, key, sizeof key);
    int g = m->gpus ? __builtin_ctz(m->gpus) : 0;
    uint64_t learned = d->store ? store_footprint(d->store, key, d->gpu_name[g]) : 0;
    struct estimate_opts o;
    struct estimate_precision p;
    uint64_t need = learned ? learned : estimate(info, ctx, -1, &o, &p), most = 0;
    free(info);
    for (size_t k = 0; k < d->sched.ngpus; k++)
        if (!m->gpus || (m->gpus & (1u << k)))
            most = holds(d, k) > most ? holds(d, k) : most;
    return most && need > most ? most : need;
}

void discover_command(struct daemon *d, unsigned i, const char *file, char *out, size_t len)
{
    const struct config_model *c = &d->dm[i].cfg;
    const struct sched_model *m = &d->smodels[i];
    struct discover_run *run = &d->disc->run[i];
    char name[2 * MODELNAME_MAX + 3], server[2 * CONFIG_PATH_MAX], qf[2 * CONFIG_PATH_MAX + 600],
        head[sizeof server + sizeof qf + 8];
    confstores_quote(c->name, name, sizeof name);
    confstores_quote(d->cfg.llama_server, server, sizeof server);
    confstores_quote(file, qf, sizeof qf);
    snprintf(head, sizeof head, "%s -m %s", server, qf);
    struct model_info *info = info_of(c);
    if (!info) { /* llama-server says what is wrong with the file */
        snprintf(out, len, "%s --host 127.0.0.1 --port ${PORT} --alias %s", head, name);
        return;
    }
    /* the room: what the GPU holds for models, less the foreign use and
     * the models resident there but this one; at least what it was given */
    int g = m->gpu >= 0 ? m->gpu : 0;
    const struct sched_gpu *G = &d->sched.gpus[g];
    uint64_t limit = G->capacity > G->foreign ? G->capacity - G->foreign : 0;
    if (G->budget && G->budget < limit)
        limit = G->budget;
    uint64_t others = sched_committed(&d->sched, g);
    others = others > m->need ? others - m->need : 0;
    uint64_t room = limit > others ? limit - others : 0;
    room = room > m->need ? room : m->need;

    struct estimate_opts o;
    struct estimate_precision p;
    unsigned ctx = target_ctx(d, c, info), all = llamacpp_all_layers(info);
    int ngl = (int)all;
    uint64_t est = estimate(info, ctx, -1, &o, &p);
    if (est > room && !c->ctx) { /* a shorter context with every layer */
        uint64_t fit = llamacpp_fit_ctx(info, &o, &p, room);
        if (fit >= MIN_CTX) {
            ctx = fit < ctx ? (unsigned)fit : ctx;
            est = estimate(info, ctx, -1, &o, &p);
        }
    }
    if (est > room) { /* some layers on the CPU */
        struct estimate_result r;
        estimate(info, ctx, -1, &o, &p);
        ngl = llamacpp_fit_layers(info, &o, &p, room, &r);
        if (ngl < 0) {
            ngl = 0;
            est = estimate(info, ctx, 0, &o, &p);
        } else {
            est = r.total;
        }
    }
    free(info);
    *run = (struct discover_run){ctx, ngl, all, est};
    char a[32], b[32];
    log_msg(LOG_LV_INFO, "%s: llama-server with -c %u -ngl %d of %u (vram fit: %s; room %s)",
            c->name, ctx, ngl, all, units_fmt_size(est, a, sizeof a),
            units_fmt_size(room, b, sizeof b));
    snprintf(out, len, "%s --host 127.0.0.1 --port ${PORT} -c %u -ngl %d --alias %s", head, ctx,
             ngl, name);
}

void discover_footprint_name(const struct daemon *d, unsigned i, char *out, size_t len)
{
    if (d->dm[i].cfg.source[0] && d->disc->run[i].ctx)
        key_of(d->smodels[i].name, d->disc->run[i].ctx, out, len);
    else
        snprintf(out, len, "%s", d->smodels[i].name);
}

const char *discover_ask(struct daemon *d, unsigned i, const json_t *body, const char *header)
{
    uint64_t ctx = 0;
    json_t *nc = json_object_get(json_object_get(body, "options"), "num_ctx");
    if (header && (units_parse_tokens(header, &ctx) < 0 || !ctx))
        return "X-Vram-Num-Ctx: a context in tokens, like 8192 or 32k";
    if (!header && json_is_integer(nc) && json_integer_value(nc) > 0)
        ctx = (uint64_t)json_integer_value(nc);
    discover_want_ctx(d, i, ctx);
    return NULL;
}

void discover_want_ctx(struct daemon *d, unsigned i, uint64_t ctx)
{
    struct dmodel *dm = &d->dm[i];
    struct sched_model *m = &d->smodels[i];
    if (!dm->cfg.source[0] || !ctx)
        return;
    unsigned want = ctx < 256 ? 256 : ctx > 10000000 ? 10000000 : (unsigned)ctx;
    bool up = m->state != SCHED_STOPPED && m->state != SCHED_FAILED;
    if (dm->cfg.ctx == want && (!up || d->disc->run[i].ctx == want))
        return;
    dm->cfg.ctx = want;
    uint64_t need = discover_need(d, &dm->cfg);
    /* while it holds memory at the old size, never less is counted */
    m->need = up && m->need > need ? m->need : need;
    if (!up || d->disc->run[i].ctx == want)
        return;
    log_msg(LOG_LV_INFO, "%s: a request asks for a context of %u tokens: restarted with it",
            dm->cfg.name, want);
    if (m->state == SCHED_BUSY) {
        dm->reconfigure = true; /* once its requests are answered */
    } else {
        struct sched_event e = {.kind = SCHED_EV_UNLOAD, .model = i};
        daemon_step(d, &e);
    }
}
