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
#include "conf/origins.h"
#include "conf/settings.h"
#include "core/units.h"
#include "model/reader.h"

struct parse {
    struct config *c;
    const char *text; /* the file, for line numbers */
    char err[512];
    /* [model NAME] sections too long for inih, read as [model @K] */
    char (*long_names)[CONFTEXT_SECTION_MAX];
    size_t nlong;
    bool given[SETTINGS_MAX_ROWS]; /* per row of settings.h: the file says it */
};

unsigned config_line_of(const char *text, const char *section, const char *name)
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
                 config_line_of(ps->text, section, name), what_);                                  \
        return 0;                                                                                  \
    } while (0)

/* One setting of the file, by its row (settings.h). */
static int setting(struct parse *ps, enum settings_section sec, struct config_model *m,
                   const char *section, const char *name, const char *v)
{
    const struct settings_row *row = settings_find(sec, name);
    if (!row) {
        char names[600];
        settings_names(sec, names, sizeof names);
        if (sec == SETTINGS_SERVE)
            FAIL("unknown setting '%s' in [serve] (%s)", name, names);
        FAIL("unknown setting '%s' (%s)", name, names);
    }
    struct settings_ctx x = {
        .c = ps->c, .m = m, .name = name, .text = ps->text, .section = section, .given = ps->given};
    const char *why = settings_set(row, &x, v);
    if (why)
        FAIL("%s", why);
    return 1;
}

void config_model_defaults(struct config_model *m, const char *name)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    m->keep_alive_s = 300; /* [serve]'s keep_alive's default, until config_parse has [serve]'s */
    m->preempt = -1;       /* where fast swap can */
    settings_defaults(SETTINGS_MODEL, NULL, m);
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
        return setting(ps, SETTINGS_SERVE, NULL, section, name, value);
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
        return setting(ps, SETTINGS_MODEL, m, section, name, value);
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
                     c->path, config_line_of(text, sec, "aliases"), al, m->name, clash);
            return;
        }
    }
}

/* A whole number from 0 to max, or -1. */
static long number(const char *v, unsigned long max)
{
    char *end;
    if (!isdigit((unsigned char)*v))
        return -1;
    unsigned long n = strtoul(v, &end, 10);
    return *end || n > max ? -1 : (long)n;
}

/* Ollama's variables into c where [serve] said nothing of them (given:
 * settings.h's rows the file says), naming those used in c->from_env:
 * read only where the file is silent, so that the file stays what
 * decides; a variable set to nonsense is an error, as a bad line of the
 * file is, rather than a default quietly kept. 0, or -1 with err (the
 * variable named, and the setting that overrides it). */
static int from_env(struct config *c, const bool *given, char *err, size_t len)
{
    bool keep_set = given[settings_find(SETTINGS_SERVE, "keep_alive") - settings_rows];
    bool loaded_set = given[settings_find(SETTINGS_SERVE, "max_loaded") - settings_rows];
    bool queue_set = given[settings_find(SETTINGS_SERVE, "max_queue") - settings_rows];
    const char *v;
    long n;
    size_t at = 0;
#define USED(var)                                                                                  \
    if (at < sizeof c->from_env)                                                                   \
    at += (size_t)snprintf(c->from_env + at, sizeof c->from_env - at, "%s%s=%.40s", at ? " " : "", \
                           var, v)
    c->from_env[0] = '\0';
    if (!keep_set && (v = getenv("OLLAMA_KEEP_ALIVE")) && *v) {
        if (!confdefaults_keep(v, &c->keep_alive_s)) {
            snprintf(err, len,
                     "%s: OLLAMA_KEEP_ALIVE='%.60s' (from the environment): a duration, like 5m, "
                     "or -1 for good; or keep_alive = in [serve], which wins",
                     c->path, v);
            return -1;
        }
        USED("OLLAMA_KEEP_ALIVE");
    }
    if (!loaded_set && (v = getenv("OLLAMA_MAX_LOADED_MODELS")) && *v) {
        if ((n = number(v, 1000)) < 0) {
            snprintf(err, len,
                     "%s: OLLAMA_MAX_LOADED_MODELS='%.60s' (from the environment): a number of "
                     "models (0: no limit); or max_loaded = in [serve], which wins",
                     c->path, v);
            return -1;
        }
        c->max_loaded = (unsigned)n; /* Ollama's 0 is its default; here, no limit */
        USED("OLLAMA_MAX_LOADED_MODELS");
    }
    if (!queue_set && (v = getenv("OLLAMA_MAX_QUEUE")) && *v) {
        if ((n = number(v, 1000000)) < 1) {
            snprintf(err, len,
                     "%s: OLLAMA_MAX_QUEUE='%.60s' (from the environment): a number of "
                     "requests; or max_queue = in [serve], which wins",
                     c->path, v);
            return -1;
        }
        c->max_queue = n > CONFIG_MAX_QUEUE ? CONFIG_MAX_QUEUE : (unsigned)n;
        USED("OLLAMA_MAX_QUEUE");
    }
#undef USED
    return 0;
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
    settings_defaults(SETTINGS_SERVE, c, NULL);
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
        unsigned line = config_line_of(text, sec, NULL);
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
        from_env(c, ps.given, ps.err, sizeof ps.err);
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
                     path, config_line_of(text, "serve", "preload"), c->preload[k]);
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
    if (!strcmp(c->spill, CONFIG_SPILL_OFF)) {
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

struct state_peek {
    char *out;
    size_t len;
    bool given;
};

static int state_handler(void *user, const char *section, const char *name, const char *value)
{
    struct state_peek *pk = user;
    /* the last, as config_load takes it: inih calls again for a value
     * that goes on over an indented line (a second state = line is one
     * config_load refuses) */
    if (!strcmp(section, "serve") && !strcmp(name, "state")) {
        pk->given = true;
        snprintf(pk->out, pk->len, "%s", value);
    }
    return 1;
}

void config_state_in(const char *text, char *out, size_t len)
{
    struct state_peek pk = {.out = out, .len = len};
    out[0] = '\0';
    (void)ini_parse_string(text, state_handler, &pk);
    if (!pk.given) {
        struct paths def;
        paths_default(&def);
        snprintf(out, len, "%s", def.state);
    }
}

int config_state_of(const char *path, char *out, size_t len)
{
    char err[600];
    char *text = conftext_read(path, err, sizeof err);
    out[0] = '\0';
    if (!text)
        return -1;
    config_state_in(text, out, len);
    free(text);
    return 0;
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
