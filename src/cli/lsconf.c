/* lsconf: llama-swap's config.yaml, read with libyaml's document API
 * after one pass over its events that bounds its nesting and size (the
 * loader is given nothing deeper than MAX_DEPTH). A YAML alias is a
 * reference to a node read before, never a copy; a merge key (<<: *base)
 * is followed as Go's YAML library follows it, a bounded number of times.
 *
 * Macros are expanded as llama-swap expands them (its config.go):
 * ${env.NAME} in the whole text before it is read (an unset one is an
 * error, as there); then in cmd, cmdStop, proxy and checkEndpoint the
 * macros: of the file and of the model (a model's over the file's; each
 * value expanded with those defined before it) and ${MODEL_ID}; ${PORT}
 * stays, and ${PID} in cmdStop, for vram serve fills them in. An unknown
 * macro is an error. A command's comment lines (#) are taken out before,
 * and its lines joined after, as llama-swap does. */
#include "cli/lsconf.h"

#include "cli/lsmacro.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#define MAX_DEPTH   32
#define MAX_NODES   200000
#define MAX_MERGES  8           /* <<: within <<: */
/* The keys looked at, in all, merges followed: an alias is a reference,
 * so a few hundred bytes of <<: lists, each naming the one before eight
 * times, ask for 8^8 looks per key (minutes of CPU, issue 42 item 7). A
 * real file asks for a few hundred thousand. */
#define MAX_LOOKS   4000000

struct rd {
    yaml_document_t *doc;
    struct lsconf *c;
    char *err;
    size_t errlen;
    struct lsmacros mac;
    size_t looks; /* MAX_LOOKS */
};

static void fail(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct rd *r, const char *fmt, ...)
{
    if (r->err[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, r->errlen, fmt, ap);
    va_end(ap);
}

static void note(struct rd *r, struct lsconf_list *l, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(struct rd *r, struct lsconf_list *l, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (l->n == LSCONF_MAX_LIST)
        return; /* the first ones say enough */
    if (!(l->v[l->n] = strdup(buf)))
        fail(r, "out of memory");
    else
        l->n++;
}

/* ---- the document ---- */

static yaml_node_t *node(struct rd *r, int id)
{
    return yaml_document_get_node(r->doc, id);
}

/* A scalar's text, or NULL (not a scalar, or a NUL inside it). */
static const char *scalar(const yaml_node_t *n)
{
    if (!n || n->type != YAML_SCALAR_NODE)
        return NULL;
    const char *v = (const char *)n->data.scalar.value;
    return strlen(v) == n->data.scalar.length ? v : NULL;
}

static yaml_node_t *map_get_at(struct rd *r, yaml_node_t *map, const char *key, int merges)
{
    if (!map || map->type != YAML_MAPPING_NODE || r->err[0])
        return NULL;
    yaml_node_t *merged = NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        if (++r->looks > MAX_LOOKS) {
            fail(r, "its merge keys (<<:) ask for more than %d looks at keys, which no "
                    "llama-swap configuration does (aliases of aliases, each merged many "
                    "times): not read",
                 MAX_LOOKS);
            return NULL;
        }
        const char *k = scalar(node(r, p->key));
        if (k && !strcmp(k, key))
            return node(r, p->value);
        if (k && !strcmp(k, "<<"))
            merged = node(r, p->value);
    }
    if (!merged || merges >= MAX_MERGES)
        return NULL;
    if (merged->type == YAML_MAPPING_NODE)
        return map_get_at(r, merged, key, merges + 1);
    if (merged->type == YAML_SEQUENCE_NODE) /* <<: [*a, *b]: the first that has it */
        for (yaml_node_item_t *i = merged->data.sequence.items.start;
             i < merged->data.sequence.items.top; i++) {
            yaml_node_t *v = map_get_at(r, node(r, *i), key, merges + 1);
            if (v)
                return v;
        }
    return NULL;
}

/* map[key], merge keys followed; NULL when absent (or map is no mapping). */
static yaml_node_t *map_get(struct rd *r, yaml_node_t *map, const char *key)
{
    return map_get_at(r, map, key, 0);
}

/* The keys of map that are not in known (NULL-ended): a note each. */
static void unknown_keys(struct rd *r, yaml_node_t *map, const char *const *known,
                         struct lsconf_list *notes, const char *where)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const char *k = scalar(node(r, p->key));
        bool ok = k && !strcmp(k, "<<");
        for (size_t i = 0; k && !ok && known[i]; i++)
            ok = !strcmp(k, known[i]);
        if (!ok)
            note(r, notes, "%s%.80s: not read (vram import does not know it)", where,
                 k ? k : "(a key that is not text)");
    }
}

static bool as_long(struct rd *r, yaml_node_t *n, const char *where, long lo, long hi, long *out)
{
    const char *v = scalar(n);
    char *end;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || *end || x < lo || x > hi) {
        fail(r, "%s: a whole number from %ld to %ld", where, lo, hi);
        return false;
    }
    *out = x;
    return true;
}

static bool as_bool(struct rd *r, yaml_node_t *n, const char *where, bool *out)
{
    const char *v = scalar(n);
    if (v && (!strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcasecmp(v, "on")))
        *out = true;
    else if (v && (!strcasecmp(v, "false") || !strcasecmp(v, "no") || !strcasecmp(v, "off")))
        *out = false;
    else {
        fail(r, "%s: true or false", where);
        return false;
    }
    return true;
}

/* ---- macros (cli/lsmacro.h) ---- */

static char *expand(struct rd *r, const char *text, const char *id, bool pid, const char *where)
{
    char e[400];
    char *x = lsmacro_expand(&r->mac, text, id, pid, where, e, sizeof e);
    if (!x)
        fail(r, "%s", e);
    return x;
}

/* macros: NAME: VALUE ... into m, each value expanded with what is defined
 * before it (${MODEL_ID} stays for the model). */
static void read_macros(struct rd *r, yaml_node_t *map, struct lsmacro *m, size_t *n,
                        const char *where)
{
    if (!map)
        return;
    if (map->type != YAML_MAPPING_NODE) {
        fail(r, "%s: a mapping of NAME: VALUE", where);
        return;
    }
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top && !r->err[0]; p++) {
        const char *k = scalar(node(r, p->key)), *v = scalar(node(r, p->value));
        char at[160];
        snprintf(at, sizeof at, "%s.%.60s", where, k ? k : "?");
        if (!k || !*k || strlen(k) >= sizeof m[0].name || !v) {
            fail(r, "%s: a macro is NAME: VALUE, its name under 64 characters, its value text", at);
            return;
        }
        for (const char *c = k; *c; c++)
            if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-') {
                fail(r, "%s: a macro's name is letters, digits, '_' and '-'", at);
                return;
            }
        if (!strcmp(k, "PORT") || !strcmp(k, "MODEL_ID") || !strcmp(k, "PID")) {
            fail(r, "%s: %s is llama-swap's own macro", at, k);
            return;
        }
        if (*n == LSMACRO_MAX) {
            fail(r, "%s: more than %d macros", where, LSMACRO_MAX);
            return;
        }
        char *val = expand(r, v, NULL, true, at);
        if (!val)
            return;
        snprintf(m[*n].name, sizeof m[0].name, "%s", k);
        m[(*n)++].value = val;
    }
}

/* ---- the parts of the file ---- */

/* A list of text (aliases, env, members...) into l, each through expand
 * when id is given. A single text is a list of one. */
static void read_list(struct rd *r, yaml_node_t *n, struct lsconf_list *l, const char *id,
                      const char *where)
{
    if (!n)
        return;
    if (scalar(n)) {
        char *v = id ? expand(r, scalar(n), id, false, where) : strdup(scalar(n));
        if (v && l->n < LSCONF_MAX_LIST)
            l->v[l->n++] = v;
        else if (!v)
            fail(r, "out of memory");
        else
            free(v);
        return;
    }
    if (n->type != YAML_SEQUENCE_NODE) {
        fail(r, "%s: a list", where);
        return;
    }
    for (yaml_node_item_t *i = n->data.sequence.items.start;
         i < n->data.sequence.items.top && !r->err[0]; i++) {
        const char *v = scalar(node(r, *i));
        if (!v) {
            fail(r, "%s: a list of text", where);
            return;
        }
        if (l->n == LSCONF_MAX_LIST) {
            fail(r, "%s: more than %d entries", where, LSCONF_MAX_LIST);
            return;
        }
        char *x = id ? expand(r, v, id, false, where) : strdup(v);
        if (!x) {
            fail(r, "out of memory");
            return;
        }
        l->v[l->n++] = x;
    }
}

/* A text setting of a model, macros expanded where llama-swap expands
 * them (cmd, cmdStop, proxy, checkEndpoint); NULL when absent. */
static char *model_text(struct rd *r, yaml_node_t *m, const char *key, const char *id, bool pid,
                        bool command)
{
    bool plain = !strcmp(key, "name") || !strcmp(key, "description") ||
                 !strcmp(key, "useModelName");
    yaml_node_t *n = map_get(r, m, key);
    if (!n)
        return NULL;
    char where[200];
    snprintf(where, sizeof where, "models.%.100s.%s", id, key);
    const char *v = scalar(n);
    if (!v) {
        fail(r, "%s: text", where);
        return NULL;
    }
    /* as llama-swap: comment lines out, then the macros, then (as it runs
     * a command) the lines joined, a macro's own lines with them */
    char *raw = command ? lsmacro_command(v) : NULL;
    if (command && !raw) {
        fail(r, "out of memory");
        return NULL;
    }
    char *x = plain ? strdup(v) : expand(r, raw ? raw : v, id, pid, where);
    free(raw);
    if (plain && !x)
        fail(r, "out of memory");
    if (x && command) {
        char *c = lsmacro_command(x);
        free(x);
        if (!(x = c))
            fail(r, "out of memory");
    } else if (x) { /* a folded macro's newline at its end, or blanks */
        size_t xl = strlen(x);
        while (xl && isspace((unsigned char)x[xl - 1]))
            x[--xl] = '\0';
        size_t lead = strspn(x, " \t\n\r");
        memmove(x, x + lead, xl - lead + 1);
    }
    return x;
}

static void read_model(struct rd *r, const char *id, yaml_node_t *m)
{
    static const char *const known[] = {
        "cmd",     "cmdStop", "proxy",  "checkEndpoint", "ttl",     "useModelName", "aliases",
        "env",     "name",    "description", "unlisted", "macros", "concurrencyLimit",
        "unloadTimeout", "filters", "metadata", "sendLoadingState", "timeouts", NULL};
    struct lsconf_model *o = &r->c->models[r->c->nmodels++];
    o->group = -1;
    o->ttl = -1;
    o->unload_timeout = -1;
    if (!(o->id = strdup(id))) {
        fail(r, "out of memory");
        return;
    }
    char where[200];
    snprintf(where, sizeof where, "models.%.100s", id);
    if (m->type != YAML_MAPPING_NODE) {
        fail(r, "%s: a mapping (cmd: ...)", where);
        return;
    }
    r->mac.nlocal = 0;
    snprintf(where, sizeof where, "models.%.100s.macros", id);
    read_macros(r, map_get(r, m, "macros"), r->mac.local, &r->mac.nlocal, where);
    o->cmd = model_text(r, m, "cmd", id, false, true);
    if (!r->err[0] && (!o->cmd || !*o->cmd))
        fail(r, "models.%.100s: no cmd (llama-swap needs one too)", id);
    o->stop = model_text(r, m, "cmdStop", id, true, true);
    o->proxy = model_text(r, m, "proxy", id, false, false);
    o->check = model_text(r, m, "checkEndpoint", id, false, false);
    o->upstream = model_text(r, m, "useModelName", id, false, false);
    o->name = model_text(r, m, "name", id, false, false);
    o->description = model_text(r, m, "description", id, false, false);
    snprintf(where, sizeof where, "models.%.100s.aliases", id);
    read_list(r, map_get(r, m, "aliases"), &o->aliases, NULL, where);
    snprintf(where, sizeof where, "models.%.100s.env", id);
    read_list(r, map_get(r, m, "env"), &o->env, NULL, where);
    yaml_node_t *n;
    snprintf(where, sizeof where, "models.%.100s.ttl", id);
    if ((n = map_get(r, m, "ttl")))
        as_long(r, n, where, -1, 365L * 86400, &o->ttl);
    snprintf(where, sizeof where, "models.%.100s.unloadTimeout", id);
    if ((n = map_get(r, m, "unloadTimeout")))
        as_long(r, n, where, 0, 3600, &o->unload_timeout);
    snprintf(where, sizeof where, "models.%.100s.concurrencyLimit", id);
    if ((n = map_get(r, m, "concurrencyLimit")))
        as_long(r, n, where, 0, 10000, &o->concurrency);
    snprintf(where, sizeof where, "models.%.100s.unlisted", id);
    if ((n = map_get(r, m, "unlisted")))
        as_bool(r, n, where, &o->unlisted);
    static const struct {
        const char *key, *why;
    } none[] = {
        {"filters", "vram passes a request's parameters as the client sent them"},
        {"metadata", "vram's /v1/models gives each model's state, no metadata"},
        {"sendLoadingState", "a client waits for its model without loading messages"},
        {"timeouts", "vram's proxy has one client_timeout in [serve], and wait"},
    };
    for (size_t k = 0; k < sizeof none / sizeof none[0]; k++)
        if (map_get(r, m, none[k].key))
            note(r, &o->notes, "%s: not carried: %s", none[k].key, none[k].why);
    unknown_keys(r, m, known, &o->notes, "");
    for (size_t i = 0; i < r->mac.nlocal; i++)
        free(r->mac.local[i].value);
    r->mac.nlocal = 0;
}

static void read_groups(struct rd *r, yaml_node_t *g)
{
    if (!g)
        return;
    if (g->type != YAML_MAPPING_NODE) {
        fail(r, "groups: a mapping of NAME: {swap, exclusive, persistent, members}");
        return;
    }
    for (yaml_node_pair_t *p = g->data.mapping.pairs.start;
         p < g->data.mapping.pairs.top && !r->err[0]; p++) {
        const char *k = scalar(node(r, p->key));
        yaml_node_t *v = node(r, p->value);
        char where[160];
        snprintf(where, sizeof where, "groups.%.100s", k ? k : "?");
        if (!k || !v || v->type != YAML_MAPPING_NODE) {
            fail(r, "%s: NAME: {swap, exclusive, persistent, members}", where);
            return;
        }
        if (r->c->ngroups == LSCONF_MAX_LIST) {
            fail(r, "groups: more than %d", LSCONF_MAX_LIST);
            return;
        }
        struct lsconf_group *o = &r->c->groups[r->c->ngroups++];
        o->swap = o->exclusive = true; /* llama-swap's defaults */
        if (!(o->name = strdup(k))) {
            fail(r, "out of memory");
            return;
        }
        yaml_node_t *n;
        char at[200];
        snprintf(at, sizeof at, "%s.swap", where);
        if ((n = map_get(r, v, "swap")))
            as_bool(r, n, at, &o->swap);
        snprintf(at, sizeof at, "%s.exclusive", where);
        if ((n = map_get(r, v, "exclusive")))
            as_bool(r, n, at, &o->exclusive);
        snprintf(at, sizeof at, "%s.persistent", where);
        if ((n = map_get(r, v, "persistent")))
            as_bool(r, n, at, &o->persistent);
        snprintf(at, sizeof at, "%s.members", where);
        read_list(r, map_get(r, v, "members"), &o->members, NULL, at);
    }
}

/* Each group's members to their models: a model in two groups is an
 * error, as in llama-swap; a member that is no model, a note. */
static void link_groups(struct rd *r)
{
    struct lsconf *c = r->c;
    for (size_t g = 0; g < c->ngroups; g++)
        for (size_t k = 0; k < c->groups[g].members.n; k++) {
            const char *mem = c->groups[g].members.v[k];
            size_t i = 0;
            while (i < c->nmodels && strcmp(c->models[i].id, mem))
                i++;
            if (i == c->nmodels) {
                note(r, &c->notes, "groups.%.100s: %.100s is no model of the file: left out",
                     c->groups[g].name, mem);
            } else if (c->models[i].group >= 0 && c->models[i].group != (int)g) {
                fail(r, "groups.%.100s: %.100s is in groups.%.100s too: a model is in one group",
                     c->groups[g].name, mem, c->groups[c->models[i].group].name);
                return;
            } else {
                c->models[i].group = (int)g;
            }
        }
}

static void read_top(struct rd *r, yaml_node_t *top)
{
    static const char *const known[] = {
        "models",       "groups",       "macros",     "hooks",        "healthCheckTimeout",
        "startPort",    "globalTTL",    "apiKeys",    "logLevel",     "logTimeFormat",
        "logToStdout",  "metricsMaxInMemory", "captureBuffer", "sendLoadingState",
        "includeAliasesInList", "unloadTimeout", "matrix", "profiles", "peers", "performance",
        "ui",           "store",        NULL};
    struct lsconf *c = r->c;
    if (!top || top->type != YAML_MAPPING_NODE) {
        fail(r, "not a llama-swap configuration: a mapping with models: at its top");
        return;
    }
    read_macros(r, map_get(r, top, "macros"), r->mac.global, &r->mac.nglobal, "macros");
    yaml_node_t *n;
    if (!r->err[0] && (n = map_get(r, top, "healthCheckTimeout")) &&
        as_long(r, n, "healthCheckTimeout", 0, 86400, &c->health_timeout) &&
        c->health_timeout < 15)
        c->health_timeout = 15; /* llama-swap's least */
    if (!r->err[0] && (n = map_get(r, top, "startPort")))
        as_long(r, n, "startPort", 1, 65535, &c->start_port);
    if (!r->err[0] && (n = map_get(r, top, "globalTTL")))
        as_long(r, n, "globalTTL", 0, 365L * 86400, &c->global_ttl);
    if (!r->err[0] && (n = map_get(r, top, "unloadTimeout")))
        as_long(r, n, "unloadTimeout", 0, 3600, &c->unload_timeout);
    if (!r->err[0])
        read_list(r, map_get(r, top, "apiKeys"), &c->keys, NULL, "apiKeys");
    for (size_t i = 0; i < c->keys.n && !r->err[0]; i++)
        if (!*c->keys.v[i] || strchr(c->keys.v[i], ' '))
            fail(r, "apiKeys: a key is empty or has a blank (llama-swap refuses it too)");
    yaml_node_t *models = map_get(r, top, "models");
    if (!r->err[0] && (!models || models->type != YAML_MAPPING_NODE ||
                       models->data.mapping.pairs.top == models->data.mapping.pairs.start))
        fail(r, "models: none (a mapping of ID: {cmd: ...})");
    for (yaml_node_pair_t *p = models && models->type == YAML_MAPPING_NODE
                                   ? models->data.mapping.pairs.start
                                   : NULL;
         p && p < models->data.mapping.pairs.top && !r->err[0]; p++) {
        const char *id = scalar(node(r, p->key));
        if (!id || !*id) {
            fail(r, "models: each model's ID is text");
            break;
        }
        for (size_t i = 0; i < c->nmodels; i++)
            if (!strcmp(c->models[i].id, id))
                fail(r, "models.%.100s: given twice", id);
        if (c->nmodels == LSCONF_MAX_MODELS)
            fail(r, "models: more than %d", LSCONF_MAX_MODELS);
        if (!r->err[0])
            read_model(r, id, node(r, p->value));
    }
    if (!r->err[0])
        read_groups(r, map_get(r, top, "groups"));
    if (!r->err[0])
        link_groups(r);
    yaml_node_t *hooks = map_get(r, top, "hooks");
    yaml_node_t *start = map_get(r, hooks, "on_startup");
    if (!r->err[0])
        read_list(r, map_get(r, start, "preload"), &c->preload, NULL, "hooks.on_startup.preload");
    static const char *const hook_keys[] = {"on_startup", NULL}, *const start_keys[] = {"preload",
                                                                                           NULL};
    unknown_keys(r, hooks, hook_keys, &c->notes, "hooks.");
    unknown_keys(r, start, start_keys, &c->notes, "hooks.on_startup.");
    c->matrix = map_get(r, top, "matrix") != NULL;
    static const struct {
        const char *key, *why;
    } none[] = {
        {"logLevel", "vram serve logs at info; --verbose or --quiet"},
        {"logTimeFormat", "vram serve's lines carry the local time (journald's own under systemd)"},
        {"logToStdout", "vram serve logs to stderr; each model's output is its log file "
                        "(GET /v1/models/NAME/log)"},
        {"metricsMaxInMemory", "vram serve keeps its events in its SQLite state"},
        {"captureBuffer", "vram serve does not capture requests"},
        {"sendLoadingState", "a client waits for its model without loading messages"},
        {"includeAliasesInList", "vram's /v1/models lists models, not aliases"},
        {"matrix", "vram runs together what fits in memory; max_loaded bounds how many"},
        {"profiles", "vram has no switched model IDs: each name leads to one model"},
        {"peers", "vram serves its own models only"},
        {"performance", "vram status and vram top show the GPUs"},
        {"ui", "vram's dashboard is at /ui"},
        {"store", "vram serve's state is the state = file"},
    };
    for (size_t k = 0; k < sizeof none / sizeof none[0]; k++)
        if (map_get(r, top, none[k].key))
            note(r, &c->notes, "%s: not carried: %s", none[k].key, none[k].why);
    unknown_keys(r, top, known, &c->notes, "");
}

/* One pass over the events: nesting under MAX_DEPTH, nodes under
 * MAX_NODES, one document at least. 0, or -1 with r->err. */
static int bounded(struct rd *r, const char *text, size_t len)
{
    yaml_parser_t p;
    yaml_event_t e;
    if (!yaml_parser_initialize(&p)) {
        fail(r, "out of memory");
        return -1;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    int depth = 0, rc = 0;
    size_t nodes = 0;
    for (bool done = false; !done;) {
        if (!yaml_parser_parse(&p, &e)) {
            fail(r, "not YAML: %s at line %zu, column %zu", p.problem ? p.problem : "an error",
                 p.problem_mark.line + 1, p.problem_mark.column + 1);
            rc = -1;
            break;
        }
        if (e.type == YAML_MAPPING_START_EVENT || e.type == YAML_SEQUENCE_START_EVENT)
            depth++;
        else if (e.type == YAML_MAPPING_END_EVENT || e.type == YAML_SEQUENCE_END_EVENT)
            depth--;
        nodes += e.type == YAML_SCALAR_EVENT || e.type == YAML_ALIAS_EVENT ||
                 e.type == YAML_MAPPING_START_EVENT || e.type == YAML_SEQUENCE_START_EVENT;
        done = e.type == YAML_STREAM_END_EVENT || e.type == YAML_DOCUMENT_END_EVENT;
        yaml_event_delete(&e);
        if (depth > MAX_DEPTH || nodes > MAX_NODES) {
            fail(r, "more nested or larger than a llama-swap configuration is (%d levels, %d "
                    "nodes at most)",
                 MAX_DEPTH, MAX_NODES);
            rc = -1;
            break;
        }
    }
    yaml_parser_delete(&p);
    return rc;
}

int lsconf_read(const char *text, size_t len, struct lsconf *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->health_timeout = c->start_port = c->unload_timeout = -1;
    err[0] = '\0';
    struct rd *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    r->c = c;
    r->err = err;
    r->errlen = errlen;
    yaml_parser_t p;
    yaml_document_t doc;
    bool loaded = false;
    char *filled = NULL;
    if (len > LSCONF_MAX_BYTES)
        fail(r, "larger than 1 MiB: not a llama-swap configuration");
    else if ((filled = lsmacro_env(text, len, (size_t)LSCONF_MAX_BYTES * 4, &len, err, errlen)))
        text = filled;
    if (filled && bounded(r, text, len) == 0) {
        if (!yaml_parser_initialize(&p)) {
            fail(r, "out of memory");
        } else {
            yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
            if (!yaml_parser_load(&p, &doc))
                fail(r, "not YAML: %s at line %zu", p.problem ? p.problem : "an error",
                     p.problem_mark.line + 1);
            else
                loaded = true;
            yaml_parser_delete(&p);
        }
    }
    if (loaded) {
        r->doc = &doc;
        read_top(r, yaml_document_get_root_node(&doc));
        yaml_document_delete(&doc);
    }
    lsmacros_free(&r->mac);
    free(filled);
    free(r);
    return err[0] ? -1 : 0;
}

static void list_free(struct lsconf_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    l->n = 0;
}

void lsconf_free(struct lsconf *c)
{
    for (size_t i = 0; i < c->nmodels; i++) {
        struct lsconf_model *m = &c->models[i];
        free(m->id);
        free(m->cmd);
        free(m->stop);
        free(m->proxy);
        free(m->check);
        free(m->upstream);
        free(m->name);
        free(m->description);
        list_free(&m->aliases);
        list_free(&m->env);
        list_free(&m->notes);
    }
    for (size_t g = 0; g < c->ngroups; g++) {
        free(c->groups[g].name);
        list_free(&c->groups[g].members);
    }
    list_free(&c->preload);
    list_free(&c->keys);
    list_free(&c->notes);
    c->nmodels = c->ngroups = 0;
}
