/* ollamaroutes: what Ollama's clients ask of a server besides generating.
 *
 * Open WebUI, Continue and LangChain check GET / and /api/version before
 * anything else, list models with /api/tags, read a model's context length
 * and family from /api/show, and show /api/ps. The answers come from the
 * configuration and the scheduler's table; a model's details (format,
 * family, parameters, quantization, context) from its file = when it has
 * one, else from what a local store holds under one of its names (as vram
 * fit finds a model by name), read with vram fit's readers once per
 * version of the file (its size and mtime), since a GGUF's header can take
 * milliseconds to walk. A suspended model is listed by /api/ps as Ollama
 * lists a model held in host memory: its size, and 0 of it in VRAM; its
 * expires_at is when it left the GPU, as Ollama shows a model whose
 * keep-alive ran out and is still listed. */
#include "proxy/ollamaroutes.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/render_json.h"
#include "core/sched.h"
#include "host/clock.h"
#include "model/localstore.h"
#include "model/modelfile.h"
#include "proxy/reply.h"

#define DETAILS_PATH (2 * MODELREF_PATH + 300) /* a store's root, folder and file */

struct details {
    char path[DETAILS_PATH];
    long long size, mtime; /* the file's, when read; size < 0: never read */
    bool ok;
    bool gguf; /* llama.cpp's format, else safetensors */
    struct model_info info;
    /* without file =: the model found by name in a local store */
    struct modelref ref;
    bool found;
    uint64_t looked_ms; /* when the stores were last asked; 0: never */
};

#define LOOK_AGAIN_MS 60000 /* a model pulled (or removed) meanwhile is seen this late */

struct ollamaroutes {
    const struct proxyops *ops;
    struct details det[CONFIG_MAX_MODELS];
};

struct ollamaroutes *ollamaroutes_new(const struct proxyops *ops)
{
    struct ollamaroutes *o = calloc(1, sizeof *o);
    if (o)
        o->ops = ops;
    return o;
}

static void answer(struct front_req *r, int status, json_t *j)
{
    char *text = j ? json_dumps(j, JSON_COMPACT | RENDER_JSON_REALS) : NULL;
    static const char *const names[] = {"Content-Type"};
    static const char *const values[] = {"application/json"};
    front_reply(r, status, names, values, 1, text ? text : "{}", text ? strlen(text) : 2);
    free(text);
    json_decref(j);
}

/* Without file =: the first of the model's names (its own, its
 * upstream_name, its aliases) that a local store has, as vram fit finds
 * one (Ollama's store, the Hugging Face cache, LM Studio's folder); the
 * stores are asked at most once a minute. The path of what was found
 * into path, for its size and time; false when none has it. */
static bool found_by_name(struct ollamaroutes *o, unsigned i, char *path, size_t len)
{
    struct proxyops_model v;
    o->ops->model(o->ops->d, i, &v);
    const struct config_model *c = v.cfg;
    struct details *dt = &o->det[i];
    uint64_t now = clock_mono_ms();
    if (!dt->looked_ms || now - dt->looked_ms >= LOOK_AGAIN_MS) {
        dt->looked_ms = now ? now : 1;
        dt->found = false;
        const char *names[2 + CONFIG_ALIASES] = {c->name, c->upstream_name};
        for (unsigned a = 0; a < c->naliases; a++)
            names[2 + a] = c->aliases[a];
        char err[256];
        for (unsigned k = 0; !dt->found && k < 2 + c->naliases; k++)
            dt->found = names[k] && names[k][0] &&
                        localstore_find(names[k], &dt->ref, err, sizeof err) == 0;
    }
    if (!dt->found)
        return false;
    return snprintf(path, len, "%s/%s%s%s", dt->ref.root, dt->ref.dir, dt->ref.file[0] ? "/" : "",
                    dt->ref.file) < (int)len;
}

/* The model's file (file =, else found by name), read when it changed;
 * NULL without one. */
static const struct details *details_of(struct ollamaroutes *o, unsigned i, struct stat *st)
{
    struct proxyops_model v;
    o->ops->model(o->ops->d, i, &v);
    const struct config_model *c = v.cfg;
    struct details *dt = &o->det[i];
    char path[DETAILS_PATH];
    bool store = !c->file[0];
    if (store ? !found_by_name(o, i, path, sizeof path)
              : snprintf(path, sizeof path, "%s", c->file) < 0)
        return NULL;
    if (stat(path, st) < 0)
        return NULL;
    if (strcmp(dt->path, path) || dt->size != (long long)st->st_size ||
        dt->mtime != (long long)st->st_mtime) {
        snprintf(dt->path, sizeof dt->path, "%s", path);
        dt->size = (long long)st->st_size;
        dt->mtime = (long long)st->st_mtime;
        char err[256];
        /* a store's model is read beneath its root, as vram fit reads it */
        dt->ok = (store ? localstore_load(&dt->ref, &dt->info, err, sizeof err)
                        : modelfile_load(path, &dt->info, err, sizeof err)) == 0;
        /* what it is by its bytes (a blob of Ollama's or the hub's has no .gguf) */
        dt->gguf = dt->ok && dt->info.gguf;
    }
    if (store && S_ISDIR(st->st_mode)) /* a folder's: its files', when the store says */
        st->st_size = (off_t)dt->ref.disk;
    return dt;
}

/* "7.6B", "494.0M": Ollama's parameter_size. */
static void param_size(uint64_t n, char *out, size_t len)
{
    if (n >= 1000000000ULL)
        snprintf(out, len, "%.1fB", (double)n / 1e9);
    else
        snprintf(out, len, "%.1fM", (double)n / 1e6);
}

static json_t *details_json(const struct details *dt)
{
    json_t *j = json_pack("{s:s}", "parent_model", "");
    if (!dt || !dt->ok)
        return j;
    json_object_set_new(j, "format", json_string(dt->gguf ? "gguf" : "safetensors"));
    json_object_set_new(j, "family", json_string(dt->info.arch));
    json_object_set_new(j, "families", json_pack("[s]", dt->info.arch));
    if (dt->info.params) {
        char ps[32];
        param_size(dt->info.params, ps, sizeof ps);
        json_object_set_new(j, "parameter_size", json_string(ps));
    }
    char q[24]; /* as Ollama says it: the file's type (Q4_K_M), else its weights' main type */
    snprintf(q, sizeof q, "%s", dt->info.quant[0] ? dt->info.quant : dt->info.stored);
    for (char *c = q; *c; c++)
        *c = (char)toupper((unsigned char)*c);
    json_object_set_new(j, "quantization_level", json_string(q));
    return j;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    for (size_t k = 0; k < n; k++)
        h = (h ^ ((const unsigned char *)p)[k]) * 0x100000001b3ULL;
    return h;
}

/* Ollama's digest is its manifest's SHA-256, and its CLI prints the first
 * 12 digits (a panic on ""): here 64 hex digits that name the model's name,
 * command and file (path, size, time), so that they change with them. */
static void digest_of(const struct proxyops_model *m, const struct stat *st, char out[65])
{
    const struct config_model *c = m->cfg;
    long long v[2] = {st ? (long long)st->st_size : 0, st ? (long long)st->st_mtime : 0};
    for (unsigned k = 0; k < 4; k++) {
        uint64_t h = fnv(0xcbf29ce484222325ULL ^ k, m->name, strlen(m->name) + 1);
        h = fnv(h, c->command, strlen(c->command) + 1);
        h = fnv(fnv(h, c->file, strlen(c->file) + 1), v, sizeof v);
        snprintf(out + 16 * k, 17, "%016llx", (unsigned long long)h);
    }
}

/* When the model was last changed: its file's time (st, when dt), else
 * the configuration's; 0 when neither can be read. */
static uint64_t modified_ms(const struct ollamaroutes *o, const struct stat *st,
                            const struct details *dt)
{
    struct stat cs;
    return dt                                  ? (uint64_t)st->st_mtime * 1000
           : stat(o->ops->cfg->path, &cs) == 0 ? (uint64_t)cs.st_mtime * 1000
                                               : 0;
}

/* One model as /api/tags and /api/ps list it. */
static json_t *entry(struct ollamaroutes *o, unsigned i)
{
    struct proxyops_model v;
    o->ops->model(o->ops->d, i, &v);
    struct stat st;
    const struct details *dt = details_of(o, i, &st);
    const char *name = v.name;
    char t[48];
    reply_time(modified_ms(o, &st, dt), t, sizeof t);
    char digest[65];
    digest_of(&v, dt ? &st : NULL, digest);
    return json_pack("{s:s, s:s, s:s, s:I, s:s, s:o}", "name", name, "model", name, "modified_at",
                     t, "size", (json_int_t)(dt && st.st_size ? (uint64_t)st.st_size : v.size),
                     "digest", digest, "details", details_json(dt));
}

void ollamaroutes_tags(struct ollamaroutes *o, struct front_req *r)
{
    json_t *a = json_array();
    struct proxyops_model v;
    for (unsigned i = 0, n = o->ops->count(o->ops->d); i < n; i++)
        if (o->ops->model(o->ops->d, i, &v))
            json_array_append_new(a, entry(o, i));
    answer(r, 200, json_pack("{s:o}", "models", a));
}

void ollamaroutes_ps(struct ollamaroutes *o, struct front_req *r)
{
    json_t *a = json_array();
    struct proxyops_model v;
    for (unsigned i = 0, n = o->ops->count(o->ops->d); i < n; i++) {
        bool live = o->ops->model(o->ops->d, i, &v);
        enum sched_state s = v.state;
        bool on_gpu = s == SCHED_READY || s == SCHED_BUSY || s == SCHED_SUSPENDING;
        if (!live || (!on_gpu && s != SCHED_SUSPENDED && s != SCHED_RESUMING))
            continue;
        json_t *e = entry(o, i);
        char t[48];
        uint64_t exp = on_gpu ? o->ops->expires_wall_ms(o->ops->d, i) : 0;
        if (!on_gpu) /* out of VRAM: since it left, the same every time */
            reply_time(v.out_wall_ms, t, sizeof t);
        else if (exp == SCHED_FOREVER)
            snprintf(t, sizeof t, "2318-01-01T00:00:00.000Z"); /* Ollama's "forever" */
        else
            reply_time(exp, t, sizeof t);
        json_object_set_new(e, "expires_at", json_string(t));
        /* what it takes in memory, as Ollama's ps says, not its file's size */
        json_object_set_new(e, "size", json_integer((json_int_t)v.size));
        json_object_set_new(e, "size_vram", json_integer(on_gpu ? (json_int_t)v.size : 0));
        json_object_set_new(e, "state", json_string(sched_state_name(s)));
        json_array_append_new(a, e);
    }
    answer(r, 200, json_pack("{s:o}", "models", a));
}

void ollamaroutes_show(struct ollamaroutes *o, struct front_req *r)
{
    struct evbuffer *b = front_body(r);
    size_t n = evbuffer_get_length(b);
    json_t *j = n ? json_loadb((const char *)evbuffer_pullup(b, -1), n, 0, NULL) : NULL;
    json_t *m = json_object_get(j, "model");
    if (!m)
        m = json_object_get(j, "name"); /* the older clients' field */
    if (!json_is_string(m)) {
        json_decref(j);
        front_error(r, ERRBODY_BAD_REQUEST,
                    "send JSON with a \"model\" field (GET /api/tags lists them)", 0);
        return;
    }
    int i = o->ops->find(o->ops->d, json_string_value(m));
    if (i < 0) {
        char msg[200];
        snprintf(msg, sizeof msg, "model '%.100s' not found (GET /api/tags lists them)",
                 json_string_value(m));
        json_decref(j);
        front_error(r, ERRBODY_NO_MODEL, msg, 0);
        return;
    }
    json_decref(j);
    struct stat st;
    const struct details *dt = details_of(o, (unsigned)i, &st);
    json_t *info = json_object();
    if (dt && dt->ok) {
        const struct model_info *mi = &dt->info;
        char k[96];
        json_object_set_new(info, "general.architecture", json_string(mi->arch));
        json_object_set_new(info, "general.parameter_count", json_integer((json_int_t)mi->params));
#define ARCH_KEY(key, v)                                                                           \
    do {                                                                                           \
        snprintf(k, sizeof k, "%s." key, mi->arch);                                                \
        if (v)                                                                                     \
            json_object_set_new(info, k, json_integer((json_int_t)(v)));                           \
    } while (0)
        ARCH_KEY("context_length", mi->max_ctx);
        ARCH_KEY("embedding_length", mi->hidden);
        ARCH_KEY("block_count", mi->layers);
        ARCH_KEY("attention.head_count", mi->heads);
        ARCH_KEY("attention.head_count_kv", mi->kv_heads);
        ARCH_KEY("feed_forward_length", mi->ff);
#undef ARCH_KEY
    }
    char t[48];
    reply_time(modified_ms(o, &st, dt), t, sizeof t);
    struct proxyops_model v;
    o->ops->model(o->ops->d, (unsigned)i, &v);
    const struct config_model *c = v.cfg;
    char modelfile[DETAILS_PATH + 64];
    snprintf(modelfile, sizeof modelfile, "# served by vram\nFROM %s\n",
             dt           ? dt->path
             : c->file[0] ? c->file
                          : v.name);
    answer(r, 200,
           json_pack("{s:s, s:s, s:s, s:o, s:o, s:[s], s:s}", "modelfile", modelfile, "parameters",
                     "", "template", "", "details", details_json(dt), "model_info", info,
                     "capabilities", "completion", "modified_at", t));
}

void ollamaroutes_root(struct ollamaroutes *o, struct front_req *r)
{
    (void)o;
    static const char *const text[] = {"Content-Type"};
    static const char *const plain[] = {"text/plain; charset=utf-8"};
    front_reply(r, 200, text, plain, 1, "Ollama is running", 17);
}

void ollamaroutes_version(struct ollamaroutes *o, struct front_req *r)
{
    (void)o;
    answer(r, 200, json_pack("{s:s}", "version", OLLAMA_API_VERSION));
}
