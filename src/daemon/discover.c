/* discover: the stores' GGUF models as models of the daemon. A model is
 * found through model/localstore.c (every file read beneath its store's
 * root, its header checked); the path llama-server gets is the file's real
 * path, which must still be inside the store's real root. Its command is
 * the server and the file; the context and -ngl are added at each start,
 * from the llama.cpp estimate (core/llamacpp.c, what `vram fit` says):
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

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/log.h"
#include "app/store.h"
#include "core/err.h"
#include "core/llamacpp.h"
#include "core/modelname.h"
#include "core/units.h"
#include "daemon/daemon.h"
#include "model/localstore.h"
#include "model/modelfile.h"

#define MIN_CTX 2048 /* a context shortened for the room goes no lower */

/* ---- finding them ---- */

/* "NAME" and "NAME:latest" are one name to clients (daemon/names.c) */
static bool same_name(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 7 && !strcmp(a + la - 7, ":latest"))
        la -= 7;
    if (lb > 7 && !strcmp(b + lb - 7, ":latest"))
        lb -= 7;
    return la == lb && !strncmp(a, b, la);
}

static bool taken(const struct config *c, const char *name)
{
    for (size_t k = 0; k < c->nmodels; k++) {
        if (same_name(name, c->models[k].name))
            return true;
        for (unsigned a = 0; a < c->models[k].naliases; a++)
            if (same_name(name, c->models[k].aliases[a]))
                return true;
    }
    return false;
}

static bool excluded(const char *patterns, const char *name)
{
    char buf[sizeof((struct config *)0)->discover_exclude];
    snprintf(buf, sizeof buf, "%s", patterns);
    char *save = NULL;
    for (char *p = strtok_r(buf, ", \t", &save); p; p = strtok_r(NULL, ", \t", &save))
        if (fnmatch(p, name, 0) == 0)
            return true;
    return false;
}

/* s in single quotes for /bin/sh, its own quotes as '\'' */
static bool quote(const char *s, char *out, size_t len)
{
    size_t at = 0;
    if (len < 3)
        return false;
    out[at++] = '\'';
    for (; *s; s++) {
        const char *piece = *s == '\'' ? "'\\''" : NULL;
        size_t n = piece ? 4 : 1;
        if (at + n + 2 > len)
            return false;
        memcpy(out + at, piece ? piece : s, n);
        at += n;
    }
    out[at++] = '\'';
    out[at] = '\0';
    return true;
}

struct walk {
    struct config *c;
    unsigned full, skipped;
};

/* The model file's real path, when it is inside the store's real root. */
static bool real_inside(const struct modelref *ref, char *out, size_t len)
{
    char path[3 * MODELREF_PATH], root[PATH_MAX], real[PATH_MAX];
    localstore_path(ref, path, sizeof path);
    if (!realpath(ref->root, root) || !realpath(path, real))
        return false;
    size_t n = strlen(root);
    if (strncmp(real, root, n) || (real[n] != '/' && strcmp(root, "/")) || strlen(real) >= len)
        return false;
    snprintf(out, len, "%s", real);
    return true;
}

static int found(const struct modelref *ref, const char *why, void *arg)
{
    struct walk *w = arg;
    struct config *c = w->c;
    char word[24];
    snprintf(word, sizeof word, " %s ", ref->store ? ref->store : "");
    if (why || !ref->gguf || !strstr(c->discover, word))
        return 0;
    const char *bad = modelname_check(ref->name);
    if (bad || excluded(c->discover_exclude, ref->name) || taken(c, ref->name)) {
        if (bad)
            log_msg(LOG_LV_WARN, "discover: %s model '%.130s' is not served: its name %s",
                    ref->store, ref->name, bad);
        return 0;
    }
    if (c->nmodels == CONFIG_MAX_MODELS) {
        w->full++;
        return 0;
    }
    struct config_model *m = &c->models[c->nmodels];
    char file[CONFIG_PATH_MAX], q[2 * CONFIG_PATH_MAX], qs[2 * CONFIG_PATH_MAX], err[512];
    struct model_info *info = malloc(sizeof *info);
    int rc = info ? localstore_load(ref, info, err, sizeof err) : VRAM_EFAIL;
    free(info);
    if (rc != VRAM_OK || !real_inside(ref, file, sizeof file) || !quote(file, q, sizeof q) ||
        !quote(c->llama_server, qs, sizeof qs) || strlen(qs) + strlen(q) + 5 >= sizeof m->command) {
        log_msg(LOG_LV_WARN, "discover: %s model %s is not served: %s", ref->store, ref->name,
                rc != VRAM_OK ? err : "its file is not inside the store, or its path is too long");
        w->skipped++;
        return 0;
    }
    config_model_defaults(m, ref->name);
    snprintf(m->command, sizeof m->command, "%s -m %s", qs, q);
    snprintf(m->file, sizeof m->file, "%s", file);
    snprintf(m->source, sizeof m->source, "%s", ref->store);
    m->api = CONFIG_API_OPENAI; /* llama-server's /v1/...; Ollama's clients are translated */
    m->api_set = true;
    c->nmodels++;
    return 0;
}

/* llama_server = PATH (or a name looked for on PATH), else llama-server on
 * PATH: an executable regular file, its path into c->llama_server. */
static int find_server(struct config *c, char *err, size_t len)
{
    const char *want = c->llama_server[0] ? c->llama_server : "llama-server";
    char cand[CONFIG_PATH_MAX], dirs[4096];
    struct stat st;
    if (strchr(want, '/')) {
        if (stat(want, &st) == 0 && S_ISREG(st.st_mode) && access(want, X_OK) == 0)
            return 0;
        snprintf(err, len, "%s: llama_server = %s: %s; give the path of llama.cpp's llama-server",
                 c->path, want, stat(want, &st) < 0 ? strerror(errno) : "not an executable file");
        return -1;
    }
    const char *path = getenv("PATH");
    snprintf(dirs, sizeof dirs, "%s", path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
    char *save = NULL;
    for (char *dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        if ((size_t)snprintf(cand, sizeof cand, "%s/%s", dir, want) >= sizeof cand)
            continue;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
            snprintf(c->llama_server, sizeof c->llama_server, "%s", cand);
            return 0;
        }
    }
    snprintf(err, len,
             "%s: discover = serves GGUF models with llama.cpp's server, and there is no %s on "
             "PATH (%s): install llama.cpp (its llama-server), or give llama_server = "
             "/path/to/llama-server in [serve]",
             c->path, want, path && *path ? path : "unset");
    return -1;
}

int discover_models(struct config *c, char *err, size_t len)
{
    if (!c->discover[0])
        return 0;
    if (find_server(c, err, len) < 0)
        return -1;
    size_t before = c->nmodels;
    struct walk w = {c, 0, 0};
    localstore_list(found, &w);
    if (w.full)
        log_msg(LOG_LV_WARN,
                "discover: %u more models are not served: at most %d models in all (exclude "
                "some with discover_exclude =)",
                w.full, CONFIG_MAX_MODELS);
    const char *list = c->discover + 1; /* " ollama huggingface ": its words */
    log_msg(LOG_LV_INFO, "discover (%.*s): %zu models, run by %s", (int)strlen(list) - 1, list,
            c->nmodels - before, c->llama_server);
    return 0;
}

/* ---- sizing and starting them ---- */

static struct model_info *info_of(const struct config_model *m)
{
    struct model_info *info = malloc(sizeof *info);
    char err[512];
    if (info && modelfile_load(m->file, info, err, sizeof err) != VRAM_OK) {
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

void discover_command(struct daemon *d, unsigned i, char *out, size_t len)
{
    const struct config_model *c = &d->dm[i].cfg;
    const struct sched_model *m = &d->smodels[i];
    struct discover_run *run = &d->disc->run[i];
    char name[2 * MODELNAME_MAX + 3];
    quote(c->name, name, sizeof name);
    struct model_info *info = info_of(c);
    if (!info) { /* llama-server says what is wrong with the file */
        snprintf(out, len, "%s --host 127.0.0.1 --port ${PORT} --alias %s", c->command, name);
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
    snprintf(out, len, "%s --host 127.0.0.1 --port ${PORT} -c %u -ngl %d --alias %s", c->command,
             ctx, ngl, name);
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
