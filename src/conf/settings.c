/* settings: the rows, and the parse each type shares.
 *
 * A row's default is parsed as the file's value would be, by the same
 * code, so that the default a row declares is one the file could say
 * (and vram.conf(5) says it: tests/unit/test_settings.c). */
#include "conf/settings.h"

#include <ctype.h>
#include <ini.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "conf/confdefaults.h"
#include "conf/confvalue.h"
#include "conf/origins.h"
#include "core/modelname.h"
#include "core/units.h"

#define FIELD(s, f) offsetof(struct s, f), sizeof(((struct s *)0)->f)
#define SPAN(s, f, last)                                                                           \
    offsetof(struct s, f),                                                                         \
        offsetof(struct s, last) + sizeof(((struct s *)0)->last) - offsetof(struct s, f)
#define SERVE(f)         SETTINGS_SERVE, FIELD(config, f)
#define MODEL(f)         SETTINGS_MODEL, FIELD(config_model, f)
#define SERVE_SPAN(f, l) SETTINGS_SERVE, SPAN(config, f, l)
#define MODEL_SPAN(f, l) SETTINGS_MODEL, SPAN(config_model, f, l)
#define PATH_FIX         "a shorter path"
#define DAY              86400.0
#define MSG(...)         (snprintf(x->msg, sizeof x->msg, __VA_ARGS__), x->msg)

/* The field a row fills in x's config or model. */
static void *field(const struct settings_row *row, struct settings_ctx *x)
{
    return (char *)(row->section == SETTINGS_SERVE ? (void *)x->c : (void *)x->m) + row->at;
}

static unsigned line(const struct settings_ctx *x)
{
    return x->text ? config_line_of(x->text, x->section, x->name) : 0;
}

/* A value kept whole into dst (of len), or a message. */
static const char *copy(struct settings_ctx *x, char *dst, size_t len, const char *v,
                        const char *fix)
{
    if (strlen(v) >= len)
        return MSG("%s: %zu characters, more than the %zu vram keeps: %s", x->name, strlen(v),
                   len - 1, fix);
    memcpy(dst, v, strlen(v) + 1);
    return NULL;
}

/* ---- [serve]'s own parses ---- */

static const char *socket_path(struct settings_ctx *x, const char *v)
{
    if (copy(x, x->c->socket, sizeof x->c->socket, v, PATH_FIX))
        return x->msg;
    x->c->socket_line = line(x);
    if (strlen(v) >= sizeof(((struct sockaddr_un *)0)->sun_path))
        return MSG("socket '%s': a Unix socket's path has at most %zu characters: a shorter path",
                   v, sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
    return NULL;
}

static const char *token(struct settings_ctx *x, const char *v)
{
    if (copy(x, x->c->token, sizeof x->c->token, v,
             "a shorter token (openssl rand -hex 32 makes one of 64)"))
        return x->msg;
    const char *why = keys_add(&x->c->keys, "token", v);
    return why ? MSG("token: %s", why) : NULL;
}

static const char *tokens(struct settings_ctx *x, const char *v)
{
    char why[300];
    if (keys_parse(&x->c->keys, v, why, sizeof why) < 0)
        return MSG("tokens: %s (tokens = NAME:KEY, ... or a key file's path)", why);
    return NULL;
}

static const char *origins(struct settings_ctx *x, const char *v)
{
    const char *why = origins_check(v);
    if (why)
        return MSG("origins '%s': %s", v, why);
    x->c->origins_set = true;
    return copy(x, x->c->origins, sizeof x->c->origins, v,
                "fewer origins, or patterns (http://localhost:*)");
}

static const char *hosts(struct settings_ctx *x, const char *v)
{
    const char *why = origins_check_hosts(v);
    if (why)
        return MSG("hosts '%s': %s", v, why);
    return copy(x, x->c->hosts, sizeof x->c->hosts, v, "fewer names, or *.DOMAIN");
}

static const char *budget(struct settings_ctx *x, const char *v)
{
    if (!confvalue_budget(v, x->c->budget, x->c->budget_set))
        return MSG("budget '%s': a size for every GPU (22G) or per GPU (0:22G,1:20G)", v);
    return NULL;
}

static const char *spill(struct settings_ctx *x, const char *v)
{
    bool on = true;
    if (confvalue_bool(v, &on) && on)
        return MSG("spill '%s': a folder on a local disk (a fast NVMe's), or no", v);
    if (on)
        return copy(x, x->c->spill, sizeof x->c->spill, v, PATH_FIX);
    snprintf(x->c->spill, sizeof x->c->spill, "%s", CONFIG_SPILL_OFF);
    return NULL;
}

static const char *min_resident(struct settings_ctx *x, const char *v)
{
    x->c->min_resident_auto = !strcmp(v, "auto");
    if (!x->c->min_resident_auto &&
        (units_parse_seconds(v, &x->c->min_resident_s) < 0 || x->c->min_resident_s > 3600))
        return MSG("min_resident '%s': auto, or a duration up to 1h, like 1s", v);
    return NULL;
}

static const char *discover(struct settings_ctx *x, const char *v)
{
    if (!confvalue_stores(v, x->c->discover, sizeof x->c->discover))
        return MSG("discover '%s': the stores whose GGUF models to serve, of ollama, huggingface, "
                   "lmstudio, llamacpp (or all)",
                   v);
    return NULL;
}

static const char *discover_ctx(struct settings_ctx *x, const char *v)
{
    uint64_t n;
    if (units_parse_tokens(v, &n) < 0 || n < 256 || n > 10000000)
        return MSG("discover_ctx '%s': a context in tokens from 256, like 8192 or 32k", v);
    x->c->discover_ctx = (unsigned)n;
    return NULL;
}

/* user = and group =, in [serve] (every model's) or a [model] (its own) */
static const char *account(struct settings_ctx *x, const char *v)
{
    const char *why = confvalue_account(v);
    if (why)
        return MSG("%s '%.60s': %s", x->name, v, why);
    bool user = x->name[0] == 'u';
    char *dst = x->m ? (user ? x->m->user : x->m->group) : (user ? x->c->user : x->c->group);
    return copy(x, dst, RUNAS_NAME, v, user ? "a shorter user name" : "a shorter group name");
}

static const char *serve_keep_alive(struct settings_ctx *x, const char *v)
{
    if (!confdefaults_keep(v, &x->c->keep_alive_s))
        return MSG("keep_alive '%s': a duration, like 5m (0: right after each answer), or forever",
                   v);
    return NULL;
}

static const char *max_loaded(struct settings_ctx *x, const char *v)
{
    if (!confdefaults_max_loaded(v, &x->c->max_loaded, &x->c->max_loaded_gpu))
        return MSG("max_loaded '%s': models loaded at once in all (6), on each GPU (2 per gpu), "
                   "or both (6, 2 per gpu); 0: no limit",
                   v);
    return NULL;
}

static const char *preload(struct settings_ctx *x, const char *v)
{
    char buf[INI_MAX_LINE * 8], *save = NULL;
    snprintf(buf, sizeof buf, "%s", v);
    for (char *t = strtok_r(buf, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
        const char *bad = modelname_check(t);
        if (bad)
            return MSG("preload: '%.130s': %s", t, bad);
        if (x->c->npreload == CONFIG_MAX_MODELS)
            return MSG("preload: more than %d models", CONFIG_MAX_MODELS);
        snprintf(x->c->preload[x->c->npreload++], sizeof x->c->preload[0], "%s", t);
    }
    return NULL;
}

/* ---- a [model]'s own parses ---- */

/* command = and stop =: again, an indented line that continues it */
static const char *continued(struct settings_ctx *x, const char *v)
{
    char *dst = x->name[0] == 'c' ? x->m->command : x->m->stop;
    size_t have = strlen(dst);
    if (have + (have > 0) + strlen(v) >= CONFIG_CMD_MAX)
        return MSG("%s longer than %d characters", x->name, CONFIG_CMD_MAX - 1);
    snprintf(dst + have, CONFIG_CMD_MAX - have, "%s%s", have ? " " : "", v);
    return NULL;
}

static const char *vram(struct settings_ctx *x, const char *v)
{
    if (strcmp(v, "auto") && (units_parse_size(v, &x->m->vram) < 0 || !x->m->vram))
        return MSG("vram '%s': a size (6G) or auto", v);
    if (!strcmp(v, "auto"))
        x->m->vram = 0;
    x->m->vram_line = line(x);
    return NULL;
}

static const char *gpus(struct settings_ctx *x, const char *v)
{
    x->m->gpus_line = line(x);
    if (!confvalue_gpus(v, &x->m->gpus, &x->m->width))
        return MSG("gpus '%s': how many GPUs it spans (1, 2...: any with room), or which (0,1: a "
                   "list); one given GPU: gpu = 0",
                   v);
    return NULL;
}

static const char *gpu(struct settings_ctx *x, const char *v)
{
    char *end;
    x->m->gpus_line = line(x);
    long g = strtol(v, &end, 10);
    if (!strcmp(v, "any") || !strcmp(v, "auto"))
        x->m->gpus = 0;
    else if (*end || !*v || g < 0 || g >= SCHED_MAX_GPUS)
        return MSG("gpu '%s': a GPU's index, or any", v);
    else
        x->m->gpus = 1u << g;
    x->m->width = 1;
    return NULL;
}

static const char *model_keep_alive(struct settings_ctx *x, const char *v)
{
    if (!confdefaults_keep(v, &x->m->keep_alive_s))
        return MSG("%s '%s': a duration, like 5m, or forever", x->name, v);
    x->m->keep_alive_set = true;
    if (!strcmp(x->name, "idle") && !x->c->notes[0])
        snprintf(x->c->notes, sizeof x->c->notes,
                 "%s:%u: idle is now keep_alive (a model unused that long gives its memory "
                 "back; under pressure one is evicted at once): rename it",
                 x->c->path, line(x));
    return NULL;
}

static const char *evict(struct settings_ctx *x, const char *v)
{
    if (!strcmp(v, "suspend"))
        x->m->evict = SCHED_EVICT_SUSPEND;
    else if (!strcmp(v, "stop"))
        x->m->evict = SCHED_EVICT_STOP;
    else
        return MSG("evict '%s': suspend or stop", v);
    return NULL;
}

static const char *swap(struct settings_ctx *x, const char *v)
{
    if (strcmp(v, "fast") && strcmp(v, "driver"))
        return MSG("swap '%s': fast (libvramcap's pinned copies) or driver (the driver's "
                   "checkpoint)",
                   v);
    x->m->fast = !strcmp(v, "fast");
    return NULL;
}

static const char *swap_pool(struct settings_ctx *x, const char *v)
{
    if (strcmp(v, "keep") && strcmp(v, "none") && strcmp(v, "eager"))
        return MSG("swap_pool '%s': keep, none or eager", v);
    snprintf(x->m->swap_pool, sizeof x->m->swap_pool, "%s", v);
    return NULL;
}

static const char *health(struct settings_ctx *x, const char *v)
{
    if (v[0] != '/' && strcmp(v, "none"))
        return MSG("health '%s': a path on the model's server, like /health, or none (ready "
                   "once its port takes a connection)",
                   v);
    if (!strcmp(v, "none")) {
        x->m->health[0] = '\0';
        return NULL;
    }
    return copy(x, x->m->health, sizeof x->m->health, v, "a shorter path");
}

static const char *upstream_name(struct settings_ctx *x, const char *v)
{
    for (const char *k = v; *k; k++)
        if ((unsigned char)*k < 0x20 || *k == 0x7f)
            return MSG("upstream_name: a control character in it");
    return copy(x, x->m->upstream_name, sizeof x->m->upstream_name, v, "a shorter name");
}

static const char *preempt(struct settings_ctx *x, const char *v)
{
    bool b;
    if (!confvalue_bool(v, &b))
        return MSG("preempt '%s': yes or no (a model answering may be suspended mid-request for "
                   "another, its requests held)",
                   v);
    x->m->preempt = b;
    return NULL;
}

static const char *api(struct settings_ctx *x, const char *v)
{
    if (!strcmp(v, "openai"))
        x->m->api = CONFIG_API_OPENAI;
    else if (!strcmp(v, "ollama"))
        x->m->api = CONFIG_API_OLLAMA;
    else if (!strcmp(v, "both"))
        x->m->api = CONFIG_API_BOTH;
    else
        return MSG("api '%s': openai (its backend speaks /v1/... only), ollama (/api/... only) "
                   "or both",
                   v);
    x->m->api_set = true;
    return NULL;
}

static const char *aliases(struct settings_ctx *x, const char *v)
{
    char buf[512], *save = NULL;
    snprintf(buf, sizeof buf, "%s", v);
    for (char *t = strtok_r(buf, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
        const char *bad = modelname_check(t);
        if (bad)
            return MSG("alias '%.130s': %s (docs/serve.md, Names)", t, bad);
        if (x->m->naliases == CONFIG_ALIASES)
            return MSG("more than %d aliases", CONFIG_ALIASES);
        snprintf(x->m->aliases[x->m->naliases++], sizeof x->m->aliases[0], "%s", t);
    }
    return NULL;
}

/* env =: again, an indented line that continues it */
static const char *env(struct settings_ctx *x, const char *v)
{
    const char *why = confvalue_env(v, x->m->env, sizeof x->m->env, &x->m->env_len, &x->m->nenv);
    return why ? MSG("env: %s (env = KEY=VALUE KEY2=\"with blanks\")", why) : NULL;
}

/* ---- the rows ---- */

/* clang-format off */
const struct settings_row settings_rows[] = {
    /* [serve]: the daemon's places and addresses */
    {"socket", SERVE(socket), SETTINGS_OTHER, .parse = socket_path, .reload = SETTINGS_RESTART},
    {"state", SERVE(state), SETTINGS_TEXT, .reload = SETTINGS_RESTART, .want = PATH_FIX},
    {"logs", SERVE(logs), SETTINGS_TEXT, .reload = SETTINGS_RESTART, .want = PATH_FIX},
    {"metrics", SERVE(metrics), SETTINGS_TEXT, .reload = SETTINGS_RESTART, .want = "HOST:PORT"},
    {"listen", SERVE(listen), SETTINGS_TEXT, .reload = SETTINGS_RESTART, .want = "HOST:PORT"},
    {"ui", SERVE(ui), SETTINGS_TEXT, .reload = SETTINGS_RESTART, .want = "HOST:PORT"},
    /* the proxy: who may use it, from where, how much */
    {"token", SERVE(token), SETTINGS_OTHER, .parse = token, .reload = SETTINGS_LIVE},
    {"tokens", SERVE(keys), SETTINGS_OTHER, .parse = tokens, .reload = SETTINGS_LIVE},
    {"origins", SERVE(origins), SETTINGS_OTHER, .parse = origins, .reload = SETTINGS_LIVE},
    {"hosts", SERVE(hosts), SETTINGS_OTHER, .parse = hosts, .reload = SETTINGS_LIVE},
    {"max_body", SERVE(max_body), SETTINGS_SIZE, "16M", 1024, 16.0 * (1ULL << 30),
     .reload = SETTINGS_RESTART, .want = "a size from 1K to 16G, like 16M"},
    {"wait", SERVE(wait_s), SETTINGS_DURATION, "5m", 1, DAY, .reload = SETTINGS_LIVE,
     .want = "a duration from 1s to 24h, like 5m"},
    {"client_timeout", SERVE(client_timeout_s), SETTINGS_DURATION, "60s", 1, DAY,
     .reload = SETTINGS_RESTART, .want = "a duration from 1s, like 60s"},
    {"max_queue", SERVE(max_queue), SETTINGS_COUNT, "512", 1, CONFIG_MAX_QUEUE,
     .reload = SETTINGS_LIVE, .want = "proxied requests that may wait at once, 1 to 1024 (more get 503)"},
    /* the memory: GPUs, host RAM, the disk tier */
    {"budget", SERVE_SPAN(budget, budget_set), SETTINGS_OTHER, .parse = budget,
     .reload = SETTINGS_RESTART},
    {"margin", SERVE(margin), SETTINGS_SIZE, "512M", 0, 1e300, .reload = SETTINGS_RESTART,
     .want = "a size, like 512M"},
    {"host_budget", SERVE(host_budget), SETTINGS_SIZE, NULL, 0, 1e300, .reload = SETTINGS_RESTART,
     .want = "a size, like 64G"},
    {"spill", SERVE(spill), SETTINGS_OTHER, .parse = spill, .reload = SETTINGS_RESTART},
    {"spill_budget", SERVE(spill_budget), SETTINGS_SIZE, NULL, 0, 1e300,
     .reload = SETTINGS_RESTART, .want = "a size, like 200G"},
    /* the scheduler */
    {"min_resident", SERVE_SPAN(min_resident_s, min_resident_auto), SETTINGS_OTHER, "auto",
     .parse = min_resident, .reload = SETTINGS_RESTART},
    {"overlap", SERVE(overlap), SETTINGS_BOOL, "yes", .reload = SETTINGS_RESTART,
     .want = "yes or no"},
    {"preempt_gap", SERVE(preempt_gap_s), SETTINGS_DURATION, "1s", 0, 3600,
     .reload = SETTINGS_RESTART, .want = "a duration up to 1h, like 1s"},
    {"port_base", SERVE(port_base), SETTINGS_COUNT, "21000", 1024, 65000,
     .reload = SETTINGS_RESTART, .want = "a port from 1024 to 65000"},
    {"max_loaded", SERVE_SPAN(max_loaded, max_loaded_gpu), SETTINGS_OTHER, .parse = max_loaded,
     .reload = SETTINGS_LIVE},
    {"preload", SERVE_SPAN(preload, npreload), SETTINGS_OTHER, .parse = preload,
     .reload = SETTINGS_RESTART},
    /* the models: discovered ones, and what every model gets unless it says */
    {"discover", SERVE(discover), SETTINGS_OTHER, .parse = discover, .reload = SETTINGS_LIVE},
    {"discover_exclude", SERVE(discover_exclude), SETTINGS_TEXT, .reload = SETTINGS_LIVE,
     .want = "fewer patterns"},
    {"discover_ctx", SERVE(discover_ctx), SETTINGS_OTHER, .parse = discover_ctx,
     .reload = SETTINGS_LIVE},
    {"llama_server", SERVE(llama_server), SETTINGS_TEXT, .reload = SETTINGS_LIVE,
     .want = PATH_FIX},
    {"keep_alive", SERVE(keep_alive_s), SETTINGS_OTHER, "5m", .parse = serve_keep_alive,
     .reload = SETTINGS_LIVE},
    {"user", SERVE(user), SETTINGS_OTHER, .parse = account, .reload = SETTINGS_LIVE},
    {"group", SERVE(group), SETTINGS_OTHER, .parse = account, .reload = SETTINGS_LIVE},

    /* [model NAME]: its process */
    {"command", MODEL(command), SETTINGS_OTHER, .parse = continued, .reload = SETTINGS_RESTARTS},
    {"file", MODEL(file), SETTINGS_TEXT, .reload = SETTINGS_STARTS, .want = PATH_FIX},
    {"vram", MODEL(vram), SETTINGS_OTHER, .parse = vram, .reload = SETTINGS_RESTARTS},
    {"gpus", MODEL_SPAN(gpus, width), SETTINGS_OTHER, .parse = gpus, .reload = SETTINGS_RESTARTS},
    {"gpu", MODEL_SPAN(gpus, width), SETTINGS_OTHER, "any", .parse = gpu,
     .reload = SETTINGS_RESTARTS},
    {"env", MODEL_SPAN(env, nenv), SETTINGS_OTHER, .parse = env, .reload = SETTINGS_RESTARTS},
    {"user", MODEL(user), SETTINGS_OTHER, .parse = account, .reload = SETTINGS_RESTARTS},
    {"group", MODEL(group), SETTINGS_OTHER, .parse = account, .reload = SETTINGS_RESTARTS},
    {"health", MODEL(health), SETTINGS_OTHER, "/health", .parse = health,
     .reload = SETTINGS_STARTS},
    {"start_timeout", MODEL(start_timeout_s), SETTINGS_DURATION, "2m", 1, DAY,
     .reload = SETTINGS_STARTS, .want = "a duration from 1s to 24h, like 2m"},
    {"stop", MODEL(stop), SETTINGS_OTHER, .parse = continued, .reload = SETTINGS_LIVE},
    {"stop_timeout", MODEL(stop_timeout_s), SETTINGS_DURATION, "10s", 0.1, 3600,
     .reload = SETTINGS_LIVE, .want = "a duration from 100ms to 1h, like 10s"},
    /* how it gives its memory back */
    {"keep_alive", MODEL(keep_alive_s), SETTINGS_OTHER, .parse = model_keep_alive,
     .reload = SETTINGS_LIVE},
    {"idle", MODEL(keep_alive_s), SETTINGS_OTHER, .parse = model_keep_alive,
     .reload = SETTINGS_LIVE, .old = true},
    {"evict", MODEL(evict), SETTINGS_OTHER, "suspend", .parse = evict, .reload = SETTINGS_LIVE},
    {"swap", MODEL(fast), SETTINGS_OTHER, "fast", .parse = swap, .reload = SETTINGS_STARTS},
    {"swap_pool", MODEL(swap_pool), SETTINGS_OTHER, .parse = swap_pool,
     .reload = SETTINGS_STARTS},
    {"cap", MODEL(cap), SETTINGS_BOOL, "no", .reload = SETTINGS_STARTS, .want = "yes or no"},
    {"priority", MODEL(priority), SETTINGS_COUNT, "5", 0, 100, .reload = SETTINGS_LIVE,
     .want = "a number from 0 to 100"},
    {"pinned", MODEL(pinned), SETTINGS_BOOL, "no", .reload = SETTINGS_LIVE, .want = "yes or no"},
    {"preempt", MODEL(preempt), SETTINGS_OTHER, .parse = preempt, .reload = SETTINGS_LIVE},
    {"slice", MODEL(slice_s), SETTINGS_DURATION, "5s", 0.1, DAY, .reload = SETTINGS_LIVE,
     .want = "a duration from 100ms, like 5s"},
    /* its requests */
    {"concurrency", MODEL(concurrency), SETTINGS_COUNT, "0", 0, 10000, .reload = SETTINGS_LIVE,
     .want = "requests at once, 0 for no limit"},
    {"api", MODEL(api), SETTINGS_OTHER, .parse = api, .reload = SETTINGS_LIVE},
    {"aliases", MODEL_SPAN(aliases, naliases), SETTINGS_OTHER, .parse = aliases,
     .reload = SETTINGS_LIVE},
    {"upstream_name", MODEL(upstream_name), SETTINGS_OTHER, .parse = upstream_name,
     .reload = SETTINGS_LIVE},
    {"api_key", MODEL(api_key), SETTINGS_TEXT, .reload = SETTINGS_LIVE,
     .want = "a shorter key"},
};
/* clang-format on */
const size_t settings_nrows = sizeof settings_rows / sizeof settings_rows[0];

const struct settings_row *settings_find(enum settings_section s, const char *name)
{
    for (size_t i = 0; i < settings_nrows; i++)
        if (settings_rows[i].section == s && !strcmp(settings_rows[i].name, name))
            return &settings_rows[i];
    return NULL;
}

/* digits only, as a whole number; false past max */
static bool count(const char *v, double max, unsigned long *out)
{
    char *end;
    if (!isdigit((unsigned char)*v))
        return false;
    *out = strtoul(v, &end, 10);
    return !*end && *out <= max;
}

const char *settings_set(const struct settings_row *row, struct settings_ctx *x, const char *v)
{
    void *f = field(row, x);
    bool ok = true;
    uint64_t bytes;
    double s;
    unsigned long n;
    x->name = x->name ? x->name : row->name;
    switch (row->type) {
    case SETTINGS_TEXT:
        if (copy(x, f, row->size, v, row->want))
            return x->msg;
        break;
    case SETTINGS_SIZE:
        ok = units_parse_size(v, &bytes) == 0 && bytes >= row->min && bytes <= row->max;
        if (ok)
            memcpy(f, &bytes, sizeof bytes);
        break;
    case SETTINGS_DURATION:
        ok = units_parse_seconds(v, &s) == 0 && s >= row->min && s <= row->max;
        if (ok)
            memcpy(f, &s, sizeof s);
        break;
    case SETTINGS_COUNT:
        ok = count(v, row->max, &n) && n >= row->min;
        if (ok) {
            unsigned u = (unsigned)n; /* an int's field holds it the same */
            memcpy(f, &u, sizeof u);
        }
        break;
    case SETTINGS_BOOL:
        ok = confvalue_bool(v, f);
        break;
    case SETTINGS_OTHER: {
        const char *why = row->parse(x, v);
        if (why)
            return why;
        break;
    }
    }
    if (!ok)
        return MSG("%s '%s': %s", x->name, v, row->want);
    if (x->given && x->text)
        x->given[row - settings_rows] = true;
    return NULL;
}

void settings_defaults(enum settings_section s, struct config *c, struct config_model *m)
{
    for (size_t i = 0; i < settings_nrows; i++) {
        const struct settings_row *row = &settings_rows[i];
        if (row->section != s || !row->def)
            continue;
        struct settings_ctx x = {.c = c, .m = m, .name = row->name};
        settings_set(row, &x, row->def); /* tests/unit/test_settings.c: each one parses */
    }
}

void settings_names(enum settings_section s, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < settings_nrows && at < len; i++)
        if (settings_rows[i].section == s && !settings_rows[i].old)
            at +=
                (size_t)snprintf(out + at, len - at, "%s%s", at ? ", " : "", settings_rows[i].name);
}

/* Whether row i fills the field of a row before it (gpu and gpus, idle
 * and keep_alive): the field is compared once, under the first's name. */
static bool again(size_t i)
{
    for (size_t k = 0; k < i; k++)
        if (settings_rows[k].section == settings_rows[i].section &&
            settings_rows[k].at == settings_rows[i].at)
            return true;
    return false;
}

static void add_name(char *out, size_t len, const char *name)
{
    size_t at = strlen(out);
    snprintf(out + at, len - at, "%s%s", at ? ", " : "", name);
}

void settings_reload(struct config *running, const struct config *next, char *restart, size_t len)
{
    restart[0] = '\0';
    for (size_t i = 0; i < settings_nrows; i++) {
        const struct settings_row *row = &settings_rows[i];
        if (row->section != SETTINGS_SERVE || again(i))
            continue;
        char *to = (char *)running + row->at;
        const char *from = (const char *)next + row->at;
        if (row->reload == SETTINGS_LIVE)
            memcpy(to, from, row->size);
        else if (memcmp(to, from, row->size))
            add_name(restart, len, row->name);
    }
}

bool settings_model_differs(const struct config_model *a, const struct config_model *b,
                            enum settings_reload rule, char *out, size_t len)
{
    out[0] = '\0';
    for (size_t i = 0; i < settings_nrows; i++) {
        const struct settings_row *row = &settings_rows[i];
        if (row->section == SETTINGS_MODEL && row->reload == rule && !again(i) &&
            memcmp((const char *)a + row->at, (const char *)b + row->at, row->size))
            add_name(out, len, row->name);
    }
    return out[0] != '\0';
}
