/* config: reading vram.conf with inih, then checking every value.
 *
 * inih (as Debian builds it) hands over section, name and value but not
 * the line; the line of a bad value is found again in the text, so that
 * every message can point at it. It also reads lines of at most
 * INI_MAX_LINE bytes and takes the rest of a longer one for a line of its
 * own: such lines are refused before it reads them, and a long command
 * goes on over indented lines (inih's multi-line values). */
#include "conf/config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "app/paths.h"
#include "core/modelname.h"
#include "conf/confdefaults.h"
#include "conf/conftext.h"
#include "conf/confvalue.h"
#include "conf/origins.h"
#include "core/units.h"
#include "model/reader.h"

struct parse {
    struct config *c;
    const char *text; /* the file, for line numbers */
    char err[512];
    /* [model NAME] sections too long for inih, read as [model @K] */
    char (*long_names)[CONFTEXT_SECTION_MAX];
    size_t nlong;
    bool keep_set, loaded_set, queue_set; /* [serve]'s, over Ollama's variables */
};

/* The line of name= in [section], for messages; 0 if not found. */
static unsigned line_of(const char *text, const char *section, const char *name)
{
    unsigned line = 1;
    bool in = section == NULL;
    size_t nl = name ? strlen(name) : 0;
    for (const char *l = text; *l; line++) {
        const char *p = l;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '[') {
            const char *e = strchr(p, ']');
            in = e && section && (size_t)(e - p - 1) == strlen(section) &&
                 !strncmp(p + 1, section, strlen(section));
            if (in && !name)
                return line;
        } else if (in && name && !strncmp(p, name, nl) &&
                   (p[nl] == '=' || p[nl] == ' ' || p[nl] == '\t' || p[nl] == ':')) {
            return line;
        }
        const char *n = strchr(l, '\n');
        if (!n)
            break;
        l = n + 1;
    }
    return 0;
}

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        char what_[400];                                                                           \
        snprintf(what_, sizeof what_, __VA_ARGS__);                                                \
        snprintf(ps->err, sizeof ps->err, "%s:%u: %s", ps->c->path,                                \
                 line_of(ps->text, section, name), what_);                                         \
        return 0;                                                                                  \
    } while (0)

/* A text setting kept whole, or refused: a value cut to fit would be
 * another value (a token cut short gets every client a 401). */
#define COPY(dst, fix)                                                                             \
    do {                                                                                           \
        if (strlen(v) >= sizeof(dst))                                                              \
            FAIL("%s: %zu characters, more than the %zu vram keeps: %s", name, strlen(v),          \
                 sizeof(dst) - 1, fix);                                                            \
        memcpy(dst, v, strlen(v) + 1);                                                             \
    } while (0)

#define PATH_FIX "a shorter path"
#define MAX_WAIT (24 * 3600.0) /* a duration past this is a typo, and overflows milliseconds */
#define MAX_BODY (16ULL << 30)

/* [serve]'s defaults for the models and the proxy's queue: 1 when name is
 * one of them (0 with ps->err), -1 when it is not. */
static int serve_defaults_key(struct parse *ps, const char *section, const char *name,
                              const char *v)
{
    struct config *c = ps->c;
    char *end;
    if (!strcmp(name, "keep_alive")) {
        if (!confdefaults_keep(v, &c->keep_alive_s))
            FAIL("keep_alive '%s': a duration, like 5m (0: right after each answer), or forever",
                 v);
        ps->keep_set = true;
    } else if (!strcmp(name, "max_loaded")) {
        if (!confdefaults_max_loaded(v, &c->max_loaded, &c->max_loaded_gpu))
            FAIL("max_loaded '%s': models loaded at once in all (6), on each GPU (2 per gpu), "
                 "or both (6, 2 per gpu); 0: no limit",
                 v);
        ps->loaded_set = true;
    } else if (!strcmp(name, "max_queue")) {
        unsigned long n = strtoul(v, &end, 10);
        if (*end || !isdigit((unsigned char)*v) || n < 1 || n > CONFIG_MAX_QUEUE)
            FAIL("max_queue '%s': proxied requests that may wait at once, 1 to %d (more get 503)",
                 v, CONFIG_MAX_QUEUE);
        c->max_queue = (unsigned)n;
        ps->queue_set = true;
    } else if (!strcmp(name, "preload")) {
        char buf[INI_MAX_LINE * 8], *save = NULL;
        snprintf(buf, sizeof buf, "%s", v);
        for (char *t = strtok_r(buf, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
            const char *bad = modelname_check(t);
            if (bad)
                FAIL("preload: '%.130s': %s", t, bad);
            if (c->npreload == CONFIG_MAX_MODELS)
                FAIL("preload: more than %d models", CONFIG_MAX_MODELS);
            snprintf(c->preload[c->npreload++], sizeof c->preload[0], "%s", t);
        }
    } else {
        return -1;
    }
    return 1;
}

#define SPILL_OFF "\x01" /* spill = no, until the defaults are settled */

static int serve_key(struct parse *ps, const char *section, const char *name, const char *v)
{
    struct config *c = ps->c;
    double d;
    int mine = serve_defaults_key(ps, section, name, v);
    if (mine >= 0)
        return mine;
    if (!strcmp(name, "socket")) {
        COPY(c->socket, PATH_FIX);
        c->socket_line = line_of(ps->text, section, name);
        if (strlen(v) >= sizeof(((struct sockaddr_un *)0)->sun_path))
            FAIL("socket '%s': a Unix socket's path has at most %zu characters: a shorter path", v,
                 sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
    } else if (!strcmp(name, "state"))
        COPY(c->state, PATH_FIX);
    else if (!strcmp(name, "logs"))
        COPY(c->logs, PATH_FIX);
    else if (!strcmp(name, "metrics"))
        COPY(c->metrics, "HOST:PORT");
    else if (!strcmp(name, "listen"))
        COPY(c->listen, "HOST:PORT");
    else if (!strcmp(name, "ui"))
        COPY(c->ui, "HOST:PORT");
    else if (!strcmp(name, "token")) {
        COPY(c->token, "a shorter token (openssl rand -hex 32 makes one of 64)");
        const char *why = keys_add(&c->keys, "token", v);
        if (why)
            FAIL("token: %s", why);
    } else if (!strcmp(name, "tokens")) {
        char why[300];
        if (keys_parse(&c->keys, v, why, sizeof why) < 0)
            FAIL("tokens: %s (tokens = NAME:KEY, ... or a key file's path)", why);
    } else if (!strcmp(name, "origins") || !strcmp(name, "hosts")) {
        const char *why = name[0] == 'o' ? origins_check(v) : origins_check_hosts(v);
        if (why)
            FAIL("%s '%s': %s", name, v, why);
        if (name[0] == 'o')
            COPY(c->origins, "fewer origins, or patterns (http://localhost:*)");
        else
            COPY(c->hosts, "fewer names, or *.DOMAIN");
        c->origins_set |= name[0] == 'o';
    }
    else if (!strcmp(name, "max_body")) {
        if (units_parse_size(v, &c->max_body) < 0 || c->max_body < 1024 || c->max_body > MAX_BODY)
            FAIL("max_body '%s': a size from 1K to 16G, like 16M", v);
    } else if (!strcmp(name, "wait")) {
        if (units_parse_seconds(v, &c->wait_s) < 0 || c->wait_s < 1 || c->wait_s > MAX_WAIT)
            FAIL("wait '%s': a duration from 1s to 24h, like 5m", v);
    } else if (!strcmp(name, "client_timeout")) {
        if (units_parse_seconds(v, &c->client_timeout_s) < 0 || c->client_timeout_s < 1 ||
            c->client_timeout_s > 86400)
            FAIL("client_timeout '%s': a duration from 1s, like 60s", v);
    } else if (!strcmp(name, "budget")) {
        if (!confvalue_budget(v, c))
            FAIL("budget '%s': a size for every GPU (22G) or per GPU (0:22G,1:20G)", v);
    } else if (!strcmp(name, "margin")) {
        if (units_parse_size(v, &c->margin) < 0)
            FAIL("margin '%s': a size, like 512M", v);
    } else if (!strcmp(name, "host_budget")) {
        if (units_parse_size(v, &c->host_budget) < 0)
            FAIL("host_budget '%s': a size, like 64G", v);
    } else if (!strcmp(name, "spill")) {
        bool on = true;
        if (confvalue_bool(v, &on) && on)
            FAIL("spill '%s': a folder on a local disk (a fast NVMe's), or no", v);
        if (on)
            COPY(c->spill, PATH_FIX);
        else
            snprintf(c->spill, sizeof c->spill, "%s", SPILL_OFF);
    } else if (!strcmp(name, "spill_budget")) {
        if (units_parse_size(v, &c->spill_budget) < 0)
            FAIL("spill_budget '%s': a size, like 200G", v);
    } else if (!strcmp(name, "min_resident")) {
        c->min_resident_auto = !strcmp(v, "auto");
        if (!c->min_resident_auto &&
            (units_parse_seconds(v, &c->min_resident_s) < 0 || c->min_resident_s > 3600))
            FAIL("min_resident '%s': auto, or a duration up to 1h, like 1s", v);
    } else if (!strcmp(name, "preempt_gap")) {
        if (units_parse_seconds(v, &c->preempt_gap_s) < 0 || c->preempt_gap_s > 3600)
            FAIL("preempt_gap '%s': a duration up to 1h, like 1s", v);
    } else if (!strcmp(name, "overlap")) {
        if (!confvalue_bool(v, &c->overlap))
            FAIL("overlap '%s': yes or no", v);
    } else if (!strcmp(name, "port_base")) {
        if (units_parse_seconds(v, &d) < 0 || d < 1024 || d > 65000 || d != (unsigned)d)
            FAIL("port_base '%s': a port from 1024 to 65000", v);
        c->port_base = (unsigned)d;
    } else if (!strcmp(name, "discover")) {
        if (!confvalue_stores(v, c->discover, sizeof c->discover))
            FAIL("discover '%s': the stores whose GGUF models to serve, of ollama, huggingface, "
                 "lmstudio, llamacpp (or all)",
                 v);
    } else if (!strcmp(name, "discover_exclude")) {
        COPY(c->discover_exclude, "fewer patterns");
    } else if (!strcmp(name, "llama_server")) {
        COPY(c->llama_server, PATH_FIX);
    } else if (!strcmp(name, "user") || !strcmp(name, "group")) {
        const char *why = confvalue_account(v);
        if (why)
            FAIL("%s '%.60s': %s", name, v, why);
        if (name[0] == 'u')
            COPY(c->user, "a shorter user name");
        else
            COPY(c->group, "a shorter group name");
    } else if (!strcmp(name, "discover_ctx")) {
        uint64_t n;
        if (units_parse_tokens(v, &n) < 0 || n < 256 || n > 10000000)
            FAIL("discover_ctx '%s': a context in tokens from 256, like 8192 or 32k", v);
        c->discover_ctx = (unsigned)n;
    } else
        FAIL("unknown setting '%s' in [serve] (socket, state, logs, metrics, listen, ui, token, "
             "tokens, origins, hosts, "
             "max_body, wait, client_timeout, budget, margin, host_budget, spill, spill_budget, "
             "min_resident, overlap, preempt_gap, port_base, discover, discover_exclude, "
             "discover_ctx, llama_server, keep_alive, max_loaded, max_queue, preload, user, group)",
             name);
    return 1;
}

static int model_key(struct parse *ps, struct config_model *m, const char *section,
                     const char *name, const char *v)
{
    char *end;
    if (!strcmp(name, "command")) { /* again: an indented line that continues it */
        size_t have = strlen(m->command);
        if (have + (have > 0) + strlen(v) >= sizeof m->command)
            FAIL("command longer than %d characters", CONFIG_CMD_MAX - 1);
        snprintf(m->command + have, sizeof m->command - have, "%s%s", have ? " " : "", v);
    } else if (!strcmp(name, "file"))
        COPY(m->file, PATH_FIX);
    else if (!strcmp(name, "vram")) {
        if (strcmp(v, "auto") && (units_parse_size(v, &m->vram) < 0 || !m->vram))
            FAIL("vram '%s': a size (6G) or auto", v);
        m->vram_line = line_of(ps->text, section, name);
    } else if (!strcmp(name, "gpus")) {
        m->gpus_line = line_of(ps->text, section, name);
        if (!confvalue_gpus(v, m))
            FAIL("gpus '%s': how many GPUs it spans (1, 2...: any with room), or which "
                 "(0,1: a list); one given GPU: gpu = 0",
                 v);
    } else if (!strcmp(name, "gpu")) {
        m->gpus_line = line_of(ps->text, section, name);
        long g = strtol(v, &end, 10);
        if (!strcmp(v, "any") || !strcmp(v, "auto")) {
            m->gpus = 0;
            m->width = 1;
        } else if (*end || !*v || g < 0 || g >= SCHED_MAX_GPUS) {
            FAIL("gpu '%s': a GPU's index, or any", v);
        } else {
            m->gpus = 1u << g;
            m->width = 1;
        }
    } else if (!strcmp(name, "keep_alive") || !strcmp(name, "idle")) {
        if (!confdefaults_keep(v, &m->keep_alive_s))
            FAIL("%s '%s': a duration, like 5m, or forever", name, v);
        m->keep_alive_set = true;
        if (!strcmp(name, "idle") && !ps->c->notes[0])
            snprintf(ps->c->notes, sizeof ps->c->notes,
                     "%s:%u: idle is now keep_alive (a model unused that long gives its memory "
                     "back; under pressure one is evicted at once): rename it",
                     ps->c->path, line_of(ps->text, section, name));
    } else if (!strcmp(name, "evict")) {
        if (!strcmp(v, "suspend"))
            m->evict = SCHED_EVICT_SUSPEND;
        else if (!strcmp(v, "stop"))
            m->evict = SCHED_EVICT_STOP;
        else
            FAIL("evict '%s': suspend or stop", v);
    } else if (!strcmp(name, "priority")) {
        long p = strtol(v, &end, 10);
        if (*end || !*v || p < 0 || p > 100)
            FAIL("priority '%s': a number from 0 to 100", v);
        m->priority = (int)p;
    } else if (!strcmp(name, "pinned")) {
        if (!confvalue_bool(v, &m->pinned))
            FAIL("pinned '%s': yes or no", v);
    } else if (!strcmp(name, "cap")) {
        if (!confvalue_bool(v, &m->cap))
            FAIL("cap '%s': yes or no", v);
    } else if (!strcmp(name, "swap")) {
        if (strcmp(v, "fast") && strcmp(v, "driver"))
            FAIL("swap '%s': fast (libvramcap's pinned copies) or driver (the driver's "
                 "checkpoint)",
                 v);
        m->fast = !strcmp(v, "fast");
    } else if (!strcmp(name, "swap_pool")) {
        if (strcmp(v, "keep") && strcmp(v, "none") && strcmp(v, "eager"))
            FAIL("swap_pool '%s': keep, none or eager", v);
        snprintf(m->swap_pool, sizeof m->swap_pool, "%s", v);
    } else if (!strcmp(name, "health")) {
        if (v[0] != '/' && strcmp(v, "none"))
            FAIL("health '%s': a path on the model's server, like /health, or none (ready "
                 "once its port takes a connection)",
                 v);
        if (!strcmp(v, "none"))
            m->health[0] = '\0';
        else
            COPY(m->health, "a shorter path");
    } else if (!strcmp(name, "stop")) { /* again: an indented line that continues it */
        size_t have = strlen(m->stop);
        if (have + (have > 0) + strlen(v) >= sizeof m->stop)
            FAIL("stop longer than %d characters", CONFIG_CMD_MAX - 1);
        snprintf(m->stop + have, sizeof m->stop - have, "%s%s", have ? " " : "", v);
    } else if (!strcmp(name, "stop_timeout")) {
        if (units_parse_seconds(v, &m->stop_timeout_s) < 0 || m->stop_timeout_s < 0.1 ||
            m->stop_timeout_s > 3600)
            FAIL("stop_timeout '%s': a duration from 100ms to 1h, like 10s", v);
    } else if (!strcmp(name, "upstream_name")) {
        for (const char *k = v; *k; k++)
            if ((unsigned char)*k < 0x20 || *k == 0x7f)
                FAIL("upstream_name: a control character in it");
        COPY(m->upstream_name, "a shorter name");
    } else if (!strcmp(name, "concurrency")) {
        long n = strtol(v, &end, 10);
        if (*end || !*v || n < 0 || n > 10000)
            FAIL("concurrency '%s': requests at once, 0 for no limit", v);
        m->concurrency = (unsigned)n;
    } else if (!strcmp(name, "preempt")) {
        bool b;
        if (!confvalue_bool(v, &b))
            FAIL("preempt '%s': yes or no (a model answering may be suspended mid-request "
                 "for another, its requests held)",
                 v);
        m->preempt = b;
    } else if (!strcmp(name, "slice")) {
        if (units_parse_seconds(v, &m->slice_s) < 0 || m->slice_s < 0.1 || m->slice_s > 86400)
            FAIL("slice '%s': a duration from 100ms, like 5s", v);
    } else if (!strcmp(name, "api_key")) {
        if (strlen(v) >= sizeof m->api_key)
            FAIL("api_key: at most %zu characters", sizeof m->api_key - 1);
        snprintf(m->api_key, sizeof m->api_key, "%s", v);
    } else if (!strcmp(name, "start_timeout")) {
        if (units_parse_seconds(v, &m->start_timeout_s) < 0 || m->start_timeout_s < 1 ||
            m->start_timeout_s > MAX_WAIT)
            FAIL("start_timeout '%s': a duration from 1s to 24h, like 2m", v);
    } else if (!strcmp(name, "api")) {
        if (!strcmp(v, "openai"))
            m->api = CONFIG_API_OPENAI;
        else if (!strcmp(v, "ollama"))
            m->api = CONFIG_API_OLLAMA;
        else if (!strcmp(v, "both"))
            m->api = CONFIG_API_BOTH;
        else
            FAIL("api '%s': openai (its backend speaks /v1/... only), ollama (/api/... only) "
                 "or both",
                 v);
        m->api_set = true;
    } else if (!strcmp(name, "aliases")) {
        char buf[512];
        snprintf(buf, sizeof buf, "%s", v);
        char *save = NULL;
        for (char *t = strtok_r(buf, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
            const char *bad = modelname_check(t);
            if (bad)
                FAIL("alias '%.130s': %s (docs/serve.md, Names)", t, bad);
            if (m->naliases == CONFIG_ALIASES)
                FAIL("more than %d aliases", CONFIG_ALIASES);
            snprintf(m->aliases[m->naliases++], sizeof m->aliases[0], "%s", t);
        }
    } else if (!strcmp(name, "env")) { /* again: an indented line that continues it */
        const char *why = confvalue_env(v, m);
        if (why)
            FAIL("env: %s (env = KEY=VALUE KEY2=\"with blanks\")", why);
    } else if (!strcmp(name, "user") || !strcmp(name, "group")) {
        const char *why = confvalue_account(v);
        if (why)
            FAIL("%s '%.60s': %s", name, v, why);
        if (name[0] == 'u')
            COPY(m->user, "a shorter user name");
        else
            COPY(m->group, "a shorter group name");
    } else
        FAIL("unknown setting '%s' (command, file, vram, gpu, gpus, keep_alive, evict, priority, "
             "pinned, cap, swap, swap_pool, health, start_timeout, concurrency, preempt, slice, "
             "api, aliases, env, api_key, stop, stop_timeout, upstream_name, user, group)",
             name);
    return 1;
}

void config_model_defaults(struct config_model *m, const char *name)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    m->width = 1;
    m->keep_alive_s = 300;
    m->preempt = -1;
    m->slice_s = 5;
    m->priority = 5;
    m->start_timeout_s = 120;
    m->stop_timeout_s = 10;
    m->fast = true;
    snprintf(m->health, sizeof m->health, "/health");
}

static struct config_model *model_named(struct parse *ps, const char *name)
{
    struct config *c = ps->c;
    for (size_t i = 0; i < c->nmodels; i++)
        if (!strcmp(c->models[i].name, name))
            return &c->models[i];
    if (c->nmodels == CONFIG_MAX_MODELS)
        return NULL;
    struct config_model *m = &c->models[c->nmodels++];
    config_model_defaults(m, name);
    return m;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    struct parse *ps = user;
    if (ps->err[0])
        return 0;
    if (!strcmp(section, "serve"))
        return serve_key(ps, section, name, value);
    if (!strncmp(section, "model ", 6)) {
        const char *mname = section + 6;
        char full[CONFTEXT_SECTION_MAX + 8];
        unsigned long k = mname[0] == '@' ? strtoul(mname + 1, NULL, 10) : ~0UL;
        if (k < ps->nlong) { /* its name in full, and the section as the file says it */
            mname = ps->long_names[k];
            snprintf(full, sizeof full, "model %s", mname);
            section = full;
        }
        const char *bad = modelname_check(mname);
        if (bad)
            FAIL("model name '%.130s': %s (docs/serve.md, Names)", mname, bad);
        struct config_model *m = model_named(ps, mname);
        if (!m)
            FAIL("more than %d models", CONFIG_MAX_MODELS);
        return model_key(ps, m, section, name, value);
    }
    FAIL("unknown section [%s]: [serve] or [model NAME]", section);
}

/* A name a client may write for model i (its own or an alias) that another
 * model also answers to, or an alias that is also i's name: said with the
 * alias's line (modelname_same: Ollama's NAME:latest is NAME). */
static void config_check_names(const struct config *c, size_t i, const char *text, struct parse *ps)
{
    const struct config_model *m = &c->models[i];
    char sec[MODELNAME_MAX + 8];
    snprintf(sec, sizeof sec, "model %s", m->name);
    for (unsigned a = 0; a < m->naliases; a++) {
        const char *al = m->aliases[a];
        const char *clash = modelname_same(al, m->name) ? m->name : NULL;
        for (size_t j = 0; !clash && j < c->nmodels; j++) {
            if (j != i && modelname_same(al, c->models[j].name))
                clash = c->models[j].name;
            for (unsigned b = 0; !clash && j != i && b < c->models[j].naliases; b++)
                if (modelname_same(al, c->models[j].aliases[b]))
                    clash = c->models[j].name;
            for (unsigned b = 0; !clash && j == i && b < a; b++)
                if (modelname_same(al, m->aliases[b]))
                    clash = m->name;
        }
        if (clash) {
            snprintf(ps->err, sizeof ps->err,
                     "%s:%u: alias '%s' of [model %s] is also [model %s]'s name or alias: a "
                     "name must lead to one model",
                     c->path, line_of(text, sec, "aliases"), al, m->name, clash);
            return;
        }
    }
}

enum config_api config_guess_api(const char *command)
{
    /* the program's name: the first word, past any directory */
    const char *p = command;
    while (*p == ' ' || *p == '\t')
        p++;
    const char *end = p + strcspn(p, " \t");
    const char *base = p;
    for (const char *q = p; q < end; q++)
        if (*q == '/')
            base = q + 1;
    return end - base == 6 && !strncmp(base, "ollama", 6) ? CONFIG_API_OLLAMA : CONFIG_API_OPENAI;
}

int config_parse(const char *text, const char *path, struct config *c, char *err, size_t len)
{
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s", path);
    /* the system service's places as root, the XDG ones for a user */
    struct paths def;
    paths_default(&def);
    snprintf(c->socket, sizeof c->socket, "%s", def.socket);
    snprintf(c->state, sizeof c->state, "%s", def.state);
    c->margin = 512ULL << 20;
    c->port_base = 21000;
    c->max_body = 16ULL << 20;
    c->wait_s = 300;
    c->client_timeout_s = 60;
    c->min_resident_s = 1;
    c->min_resident_auto = true;
    c->overlap = true;
    c->preempt_gap_s = 1;
    c->keep_alive_s = 300;
    struct parse ps = {.c = c, .text = text};
    size_t long_len;
    unsigned long_at = conftext_long_line(text, &long_len);
    int rc = 0;
    char(*long_names)[CONFTEXT_SECTION_MAX] = calloc(CONFIG_MAX_MODELS + 1, sizeof *long_names);
    char *ini = long_names ? conftext_short_sections(text, long_names, CONFIG_MAX_MODELS + 1,
                                                     &ps.nlong)
                           : NULL;
    ps.long_names = long_names;
    if (!ini)
        snprintf(ps.err, sizeof ps.err, "%s: out of memory", path);
    else if (long_at)
        snprintf(ps.err, sizeof ps.err,
                 "%s:%u: a line of %zu characters, more than the %d the INI reader takes: go on "
                 "on the next line, indented (a command continues over indented lines)",
                 path, long_at, long_len, INI_MAX_LINE - 2);
    else if (!conftext_repeats(text, path, ps.err, sizeof ps.err))
        rc = ini_parse_string(ini, handler, &ps);
    free(ini);
    free(long_names);
    if (!ps.err[0] && rc > 0)
        snprintf(ps.err, sizeof ps.err, "%s:%d: not INI syntax (a [section] or name = value)", path,
                 rc);
    for (size_t i = 0; !ps.err[0] && i < c->nmodels; i++) {
        const struct config_model *m = &c->models[i];
        char sec[MODELNAME_MAX + 8];
        snprintf(sec, sizeof sec, "model %s", m->name);
        unsigned line = line_of(text, sec, NULL);
        if (!m->command[0])
            snprintf(ps.err, sizeof ps.err, "%s:%u: [model %s] has no command = ...", path, line,
                     m->name);
        else if (!m->vram && !m->file[0])
            snprintf(ps.err, sizeof ps.err,
                     "%s:%u: [model %s]: vram = auto needs file = (the model file to "
                     "estimate from), or give vram = SIZE",
                     path, line, m->name);
    }
    for (size_t i = 0; !ps.err[0] && i < c->nmodels; i++)
        config_check_names(c, i, text, &ps);
    if (!ps.err[0])
        confdefaults_env(c, ps.keep_set, ps.loaded_set, ps.queue_set, ps.err, sizeof ps.err);
    if (!c->max_queue)
        c->max_queue = 512; /* Ollama's default */
    for (size_t i = 0; i < c->nmodels; i++)
        if (!c->models[i].keep_alive_set)
            c->models[i].keep_alive_s = c->keep_alive_s;
    for (unsigned k = 0; !ps.err[0] && k < c->npreload; k++) {
        bool found = false;
        for (size_t i = 0; !found && i < c->nmodels; i++) {
            found = modelname_same(c->preload[k], c->models[i].name);
            for (unsigned a = 0; !found && a < c->models[i].naliases; a++)
                found = modelname_same(c->preload[k], c->models[i].aliases[a]);
        }
        if (!found)
            snprintf(ps.err, sizeof ps.err,
                     "%s:%u: preload: no model '%.130s' (a [model NAME] of this file, or an alias)",
                     path, line_of(text, "serve", "preload"), c->preload[k]);
    }
    for (size_t i = 0; i < c->nmodels; i++)
        if (!c->models[i].api_set)
            c->models[i].api = config_guess_api(c->models[i].command);
    const char *oo = getenv("OLLAMA_ORIGINS"); /* as Ollama's users set it; the file wins */
    if (!ps.err[0] && !c->origins_set && oo && *oo) {
        const char *why = strlen(oo) >= sizeof c->origins ? "too long" : origins_check(oo);
        if (why)
            snprintf(ps.err, sizeof ps.err, "OLLAMA_ORIGINS '%.200s' (in the environment): %s; "
                     "or set origins = in [serve], which wins", oo, why);
        else
            snprintf(c->origins, sizeof c->origins, "%s", oo);
    }
    if (!ps.err[0] && !c->nmodels && !c->discover[0])
        snprintf(ps.err, sizeof ps.err,
                 "%s: no [model NAME] section and no discover = in [serve]: nothing to serve",
                 path);
    if (!ps.err[0] && !c->socket[0])
        snprintf(ps.err, sizeof ps.err, "%s: no place for the socket: %s; give socket = PATH in [serve]",
                 path, def.why);
    if (!c->logs[0] && !strcmp(c->state, def.state)) {
        snprintf(c->logs, sizeof c->logs, "%s", def.logs);
    } else if (!c->logs[0]) { /* beside a state file the configuration names */
        snprintf(c->logs, sizeof c->logs, "%s", c->state);
        char *slash = strrchr(c->logs, '/');
        if (slash)
            snprintf(slash, sizeof c->logs - (size_t)(slash - c->logs), "/logs");
        else
            snprintf(c->logs, sizeof c->logs, "logs");
    }
    if (!strcmp(c->spill, SPILL_OFF)) {
        c->spill[0] = '\0';
    } else if (!c->spill[0]) { /* beside the state: the daemon's own folder */
        snprintf(c->spill, sizeof c->spill, "%s", c->state);
        char *slash = strrchr(c->spill, '/');
        if (slash)
            snprintf(slash, sizeof c->spill - (size_t)(slash - c->spill), "/spill");
        else
            snprintf(c->spill, sizeof c->spill, "spill");
    }
    if (ps.err[0]) {
        snprintf(err, len, "%s", ps.err);
        return -1;
    }
    return 0;
}

bool config_uses_vramcap(const struct config_model *m)
{
    return m->cap || (m->fast && m->evict == SCHED_EVICT_SUSPEND);
}

int config_load(const char *path, struct config *c, char *err, size_t len)
{
    err[0] = '\0';
    char *text = conftext_read(path, err, len);
    if (!text)
        return -1;
    int rc = config_parse(text, path, c, err, len);
    free(text);
    return rc;
}

/* Whether m's GPUs are there: 0, or -1 with err naming the one that is
 * not and the ones that are. */
static int check_gpus(const struct config *c, const struct config_model *m, size_t ngpus,
                      const char *gpus_said, char *err, size_t len)
{
    char where[40] = "", list[SCHED_MAX_GPUS * 4] = "";
    if (m->gpus_line)
        snprintf(where, sizeof where, "%u:", m->gpus_line);
    uint32_t there = ngpus >= 32 ? ~0u : (1u << ngpus) - 1;
    size_t at = 0;
    for (unsigned g = 0; g < 32 && at < sizeof list; g++)
        if (m->gpus & (1u << g))
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%u", at ? "," : "", g);
    if (m->gpus & ~there) {
        unsigned g = (unsigned)__builtin_ctz(m->gpus & ~there);
        bool one = __builtin_popcount(m->gpus) == 1;
        snprintf(err, len,
                 "%s:%s [model %s] %s = %s: there is no GPU %u on this machine; it has %s: %s, "
                 "or leave %s out (any GPU with room)",
                 c->path, where, m->name, one ? "gpu" : "gpus", list, g, gpus_said,
                 ngpus == 1 ? "gpu = 0" : one ? "name one of those" : "name those",
                 one ? "gpu" : "gpus");
        return -1;
    }
    if (!m->gpus && m->width > ngpus) {
        snprintf(err, len,
                 "%s:%s [model %s] gpus = %u: it would span %u GPUs at once, and this machine "
                 "has %zu: %s; gpus = %zu at most (gpus = N is how many GPUs, gpu = N names one)",
                 c->path, where, m->name, m->width, m->width, ngpus, gpus_said, ngpus);
        return -1;
    }
    return 0;
}

int config_check_sizes(const struct config *c, const uint64_t *holds, size_t ngpus,
                       const char *gpus_said, char *err, size_t len)
{
    for (size_t i = 0; i < c->nmodels; i++) {
        const struct config_model *m = &c->models[i];
        if (check_gpus(c, m, ngpus, gpus_said, err, len) < 0)
            return -1;
        if (!m->vram)
            continue; /* auto: sized from its file when the daemon adds it */
        unsigned n = 0;
        uint64_t most = 0;
        for (size_t g = 0; g < ngpus && g < SCHED_MAX_GPUS; g++) {
            if (m->gpus && !(m->gpus & (1u << g)))
                continue;
            most = holds[g] > most ? holds[g] : most;
            n += holds[g] >= m->vram;
        }
        if (n >= (m->width ? m->width : 1))
            continue;
        char a[32], b[32];
        snprintf(err, len,
                 "%s:%u: [model %s] vram = %s on each of %u GPU%s: more than %s, the most a GPU "
                 "it may use holds for models (its memory less the reserve and margin, or its "
                 "budget): lower vram, or raise budget",
                 c->path, m->vram_line, m->name, units_fmt_size(m->vram, a, sizeof a),
                 m->width ? m->width : 1, m->width > 1 ? "s" : "",
                 units_fmt_size(most, b, sizeof b));
        return -1;
    }
    return 0;
}

int config_check_socket(const struct config *c, char *err, size_t len)
{
    struct stat st;
    if (lstat(c->socket, &st) < 0)
        return 0; /* nothing there (or its folder is missing: listening says so) */
    if (S_ISSOCK(st.st_mode) && st.st_uid == geteuid())
        return 0;
    char where[40] = "";
    if (c->socket_line)
        snprintf(where, sizeof where, "%u:", c->socket_line);
    if (S_ISSOCK(st.st_mode))
        snprintf(err, len,
                 "%s:%s socket = %s: a socket of uid %u is there (another user's daemon?); vram "
                 "serve removes only its own: give another path",
                 c->path, where, c->socket, (unsigned)st.st_uid);
    else
        snprintf(err, len,
                 "%s:%s socket = %s: %s is there, not a socket vram serve left; it removes "
                 "nothing else: give another path, or remove it yourself if nobody needs it",
                 c->path, where, c->socket,
                 S_ISREG(st.st_mode) ? "a regular file" : reader_kind(st.st_mode));
    return -1;
}
