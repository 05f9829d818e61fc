/* lsconf: llama-swap's config.yaml, read with libyaml's document API
 * (cli/lsyaml.c) after one pass over its events that bounds its nesting
 * and size (the loader is given nothing deeper than MAX_DEPTH).
 *
 * Macros are expanded as llama-swap's config.go expands them:
 * ${env.NAME} in the whole text before it is read, each name that the
 * YAML's content uses (not its comments) required, as there; then in
 * every value the macros: of the file and of the model (a model's over
 * the file's; each value expanded with those defined before it) and
 * ${MODEL_ID}; ${PORT} stays, and ${PID} in cmdStop, for vram serve fills
 * them in. An unknown macro is an error. A command's comment lines (#)
 * are taken out before its macros are expanded, as llama-swap does; its
 * words are split as llama-swap splits them when it is written
 * (cli/lscmd.c). The groups and routing: are cli/lsroute.c's. */
#include "cli/lsconf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "cli/lsmacro.h"
#include "cli/lsroute.h"
#include "cli/lsyaml.h"

#define MAX_DEPTH 32
#define MAX_NODES 200000

/* macros: NAME: VALUE ... into m, each value expanded with what is defined
 * before it (${MODEL_ID} stays for the model). */
static void read_macros(struct lsyaml *y, yaml_node_t *map, struct lsmacro *m, size_t *n,
                        const char *where)
{
    if (!map)
        return;
    if (map->type != YAML_MAPPING_NODE) {
        lsyaml_fail(y, "%s: a mapping of NAME: VALUE", where);
        return;
    }
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top && !y->err[0]; p++) {
        const char *k = lsyaml_scalar(lsyaml_node(y, p->key)),
                   *v = lsyaml_scalar(lsyaml_node(y, p->value));
        char at[160];
        snprintf(at, sizeof at, "%s.%.60s", where, k ? k : "?");
        if (!k || !*k || strlen(k) >= sizeof m[0].name || !v) {
            lsyaml_fail(y, "%s: a macro is NAME: VALUE, its name under 64 characters, its value "
                           "text",
                        at);
            return;
        }
        for (const char *c = k; *c; c++)
            if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-') {
                lsyaml_fail(y, "%s: a macro's name is letters, digits, '_' and '-'", at);
                return;
            }
        if (!strcmp(k, "PORT") || !strcmp(k, "MODEL_ID") || !strcmp(k, "PID")) {
            lsyaml_fail(y, "%s: %s is llama-swap's own macro", at, k);
            return;
        }
        if (*n == LSMACRO_MAX) {
            lsyaml_fail(y, "%s: more than %d macros", where, LSMACRO_MAX);
            return;
        }
        char *val = lsyaml_expand(y, v, NULL, true, at);
        if (!val)
            return;
        snprintf(m[*n].name, sizeof m[0].name, "%s", k);
        m[(*n)++].value = val;
    }
}

/* ---- a model ---- */

/* A text setting of a model, its macros expanded; NULL when absent. A
 * command's comment lines go before its macros are expanded, as
 * llama-swap strips them; other values lose their blanks around (a
 * folded macro's newline at its end). */
static char *model_text(struct lsyaml *y, yaml_node_t *m, const char *key, const char *id,
                        bool pid, bool command)
{
    yaml_node_t *n = lsyaml_get(y, m, key);
    if (!n)
        return NULL;
    char where[200];
    snprintf(where, sizeof where, "models.%.100s.%s", id, key);
    const char *v = lsyaml_scalar(n);
    if (!v) {
        lsyaml_fail(y, "%s: text", where);
        return NULL;
    }
    char *raw = command ? lsmacro_command(v) : NULL;
    if (command && !raw) {
        lsyaml_fail(y, "out of memory");
        return NULL;
    }
    char *x = lsyaml_expand(y, raw ? raw : v, id, pid, where);
    free(raw);
    if (x && !command) {
        size_t xl = strlen(x);
        while (xl && isspace((unsigned char)x[xl - 1]))
            x[--xl] = '\0';
        size_t lead = strspn(x, " \t\n\r");
        memmove(x, x + lead, xl - lead + 1);
    }
    return x;
}

/* filters: the keys of setParamsByID (macros expanded, ${MODEL_ID} the
 * model's) are aliases of the model, as llama-swap makes them; what they
 * and setParams, stripParams set in requests is noted. */
static void read_filters(struct lsyaml *y, struct lsconf_model *o, yaml_node_t *f)
{
    if (!f)
        return;
    static const char *const known[] = {"stripParams", "strip_params", "setParams",
                                        "setParamsByID", NULL};
    const char *why = "vram passes a request's parameters to the model as the client sent them";
    for (size_t k = 0; k < 3; k++)
        if (lsyaml_get(y, f, known[k]))
            lsyaml_note(y, &o->notes, "filters.%s: not carried: %s", known[k], why);
    yaml_node_t *by = lsyaml_get(y, f, "setParamsByID");
    char where[200];
    snprintf(where, sizeof where, "models.%.100s.filters.setParamsByID", o->id);
    if (by && by->type != YAML_MAPPING_NODE) {
        lsyaml_fail(y, "%s: a mapping of MODEL_ID: {PARAMETER: VALUE}", where);
        return;
    }
    for (yaml_node_pair_t *p = by ? by->data.mapping.pairs.start : NULL;
         p && p < by->data.mapping.pairs.top && !y->err[0]; p++) {
        const char *k = lsyaml_scalar(lsyaml_node(y, p->key));
        char *id = k ? lsyaml_expand(y, k, o->id, false, where) : NULL;
        if (!id) {
            lsyaml_fail(y, "%s: each key is a model ID or alias", where);
            return;
        }
        bool known_name = !strcmp(id, o->id);
        for (size_t a = 0; a < o->aliases.n && !known_name; a++)
            known_name = !strcmp(o->aliases.v[a], id);
        lsyaml_note(y, &o->notes,
                    "filters.setParamsByID: %.100s leads to this model%s; the parameters it "
                    "sets are not carried: %s",
                    id, known_name ? "" : " (an alias here, as llama-swap makes it)", why);
        if (!known_name && o->aliases.n < LSCONF_MAX_LIST) {
            o->aliases.v[o->aliases.n++] = id;
            id = NULL;
        }
        free(id);
    }
    lsyaml_unknown(y, f, known, &o->notes, "filters.");
}

static void read_model(struct lsyaml *y, struct lsconf *c, const char *id, yaml_node_t *m)
{
    static const char *const known[] = {
        "cmd", "cmdStop", "proxy", "checkEndpoint", "ttl", "useModelName", "aliases", "env",
        "name", "description", "unlisted", "macros", "concurrencyLimit", "unloadTimeout",
        "filters", "metadata", "sendLoadingState", "timeouts", "compat", "capabilities", NULL};
    struct lsconf_model *o = &c->models[c->nmodels++];
    o->group = -1;
    o->ttl = -1;
    o->unload_timeout = -1;
    o->priority = -1;
    if (!(o->id = strdup(id))) {
        lsyaml_fail(y, "out of memory");
        return;
    }
    char where[200];
    snprintf(where, sizeof where, "models.%.100s", id);
    if (m->type != YAML_MAPPING_NODE) {
        lsyaml_fail(y, "%s: a mapping (cmd: ...)", where);
        return;
    }
    y->mac.nlocal = 0;
    snprintf(where, sizeof where, "models.%.100s.macros", id);
    read_macros(y, lsyaml_get(y, m, "macros"), y->mac.local, &y->mac.nlocal, where);
    o->cmd = model_text(y, m, "cmd", id, false, true);
    if (!y->err[0] && (!o->cmd || !o->cmd[strspn(o->cmd, " \t\r\n")]))
        lsyaml_fail(y, "models.%.100s: no cmd (llama-swap needs one too)", id);
    o->stop = model_text(y, m, "cmdStop", id, true, true);
    o->proxy = model_text(y, m, "proxy", id, false, false);
    o->check = model_text(y, m, "checkEndpoint", id, false, false);
    o->upstream = model_text(y, m, "useModelName", id, false, false);
    o->name = model_text(y, m, "name", id, false, false);
    o->description = model_text(y, m, "description", id, false, false);
    snprintf(where, sizeof where, "models.%.100s.aliases", id);
    lsyaml_list(y, lsyaml_get(y, m, "aliases"), &o->aliases, id, where, true, &o->notes);
    snprintf(where, sizeof where, "models.%.100s.env", id);
    lsyaml_list(y, lsyaml_get(y, m, "env"), &o->env, id, where, false, NULL);
    yaml_node_t *n;
    snprintf(where, sizeof where, "models.%.100s.ttl", id);
    if ((n = lsyaml_get(y, m, "ttl")))
        lsyaml_long(y, n, id, where, -1, 365L * 86400, &o->ttl);
    snprintf(where, sizeof where, "models.%.100s.unloadTimeout", id);
    if ((n = lsyaml_get(y, m, "unloadTimeout")))
        lsyaml_long(y, n, id, where, 0, 3600, &o->unload_timeout);
    snprintf(where, sizeof where, "models.%.100s.concurrencyLimit", id);
    if ((n = lsyaml_get(y, m, "concurrencyLimit")))
        lsyaml_long(y, n, id, where, 0, 10000, &o->concurrency);
    snprintf(where, sizeof where, "models.%.100s.unlisted", id);
    if ((n = lsyaml_get(y, m, "unlisted")))
        lsyaml_bool(y, n, id, where, &o->unlisted);
    if (!y->err[0])
        read_filters(y, o, lsyaml_get(y, m, "filters"));
    static const struct {
        const char *key, *why;
    } none[] = {
        {"metadata", "vram's /v1/models gives each model's state, no metadata"},
        {"sendLoadingState", "a client waits for its model without loading messages"},
        {"timeouts", "vram's proxy has one client_timeout in [serve], and wait"},
        {"compat", "vram's proxy serves no WebSocket (it drops Upgrade), so none loads a "
                   "model"},
        {"capabilities", "vram's /v1/models lists no capabilities (/api/show says what the "
                         "model's file does)"},
    };
    for (size_t k = 0; k < sizeof none / sizeof none[0]; k++)
        if (lsyaml_get(y, m, none[k].key))
            lsyaml_note(y, &o->notes, "%s: not carried: %s", none[k].key, none[k].why);
    lsyaml_unknown(y, m, known, &o->notes, "");
    for (size_t i = 0; i < y->mac.nlocal; i++)
        free(y->mac.local[i].value);
    y->mac.nlocal = 0;
}

/* ---- the file ---- */

static void read_models(struct lsyaml *y, struct lsconf *c, yaml_node_t *models)
{
    if (!models || models->type != YAML_MAPPING_NODE ||
        models->data.mapping.pairs.top == models->data.mapping.pairs.start) {
        lsyaml_fail(y, "models: none (a mapping of ID: {cmd: ...})");
        return;
    }
    for (yaml_node_pair_t *p = models->data.mapping.pairs.start;
         p < models->data.mapping.pairs.top && !y->err[0]; p++) {
        const char *id = lsyaml_scalar(lsyaml_node(y, p->key));
        if (!id || !*id) {
            lsyaml_fail(y, "models: each model's ID is text");
            return;
        }
        for (size_t i = 0; i < c->nmodels; i++)
            if (!strcmp(c->models[i].id, id))
                lsyaml_fail(y, "models.%.100s: given twice", id);
        if (c->nmodels == LSCONF_MAX_MODELS)
            lsyaml_fail(y, "models: more than %d", LSCONF_MAX_MODELS);
        if (!y->err[0])
            read_model(y, c, id, lsyaml_node(y, p->value));
    }
}

static void read_top(struct lsyaml *y, struct lsconf *c, yaml_node_t *top)
{
    static const char *const known[] = {
        "models", "groups", "macros", "hooks", "healthCheckTimeout", "startPort", "globalTTL",
        "apiKeys", "logLevel", "logTimeFormat", "logToStdout", "metricsMaxInMemory",
        "captureBuffer", "sendLoadingState", "includeAliasesInList", "unloadTimeout", "matrix",
        "routing", "profiles", "selectors", "peers", "performance", "ui", "store", "upstream",
        NULL};
    if (!top || top->type != YAML_MAPPING_NODE) {
        lsyaml_fail(y, "not a llama-swap configuration: a mapping with models: at its top");
        return;
    }
    read_macros(y, lsyaml_get(y, top, "macros"), y->mac.global, &y->mac.nglobal, "macros");
    yaml_node_t *n;
    if (!y->err[0] && (n = lsyaml_get(y, top, "healthCheckTimeout")) &&
        lsyaml_long(y, n, NULL, "healthCheckTimeout", 0, 86400, &c->health_timeout) &&
        c->health_timeout < 15)
        c->health_timeout = 15; /* llama-swap's least */
    if (!y->err[0] && (n = lsyaml_get(y, top, "startPort")))
        lsyaml_long(y, n, NULL, "startPort", 1, 65535, &c->start_port);
    if (!y->err[0] && (n = lsyaml_get(y, top, "globalTTL")))
        lsyaml_long(y, n, NULL, "globalTTL", 0, 365L * 86400, &c->global_ttl);
    if (!y->err[0] && (n = lsyaml_get(y, top, "unloadTimeout")))
        lsyaml_long(y, n, NULL, "unloadTimeout", 0, 3600, &c->unload_timeout);
    if (!y->err[0])
        lsyaml_list(y, lsyaml_get(y, top, "apiKeys"), &c->keys, NULL, "apiKeys", false, NULL);
    for (size_t i = 0; i < c->keys.n && !y->err[0]; i++)
        if (!*c->keys.v[i] || strchr(c->keys.v[i], ' '))
            lsyaml_fail(y, "apiKeys: a key is empty or has a blank (llama-swap refuses it too)");
    if (!y->err[0])
        read_models(y, c, lsyaml_get(y, top, "models"));
    if (!y->err[0])
        lsroute_read(y, c, top);
    yaml_node_t *hooks = lsyaml_get(y, top, "hooks");
    yaml_node_t *start = lsyaml_get(y, hooks, "on_startup");
    if (!y->err[0])
        lsyaml_list(y, lsyaml_get(y, start, "preload"), &c->preload, NULL,
                    "hooks.on_startup.preload", false, NULL);
    static const char *const hook_keys[] = {"on_startup", NULL}, *const start_keys[] = {"preload",
                                                                                           NULL};
    lsyaml_unknown(y, hooks, hook_keys, &c->notes, "hooks.");
    lsyaml_unknown(y, start, start_keys, &c->notes, "hooks.on_startup.");
    static const struct {
        const char *key, *why;
    } none[] = {
        {"logLevel", "vram serve logs at info; --verbose or --quiet"},
        {"logTimeFormat", "vram serve's lines carry the local time (journald's own under systemd)"},
        {"logToStdout", "vram serve logs to stderr; each model's output is its log file "
                        "(vram logs MODEL)"},
        {"metricsMaxInMemory", "vram serve keeps its events in its SQLite state"},
        {"captureBuffer", "vram serve does not capture requests"},
        {"sendLoadingState", "a client waits for its model without loading messages"},
        {"includeAliasesInList", "vram's /v1/models lists models, not aliases"},
        {"profiles", "vram has no switched model IDs: each name leads to one model"},
        {"selectors", "vram has no virtual model IDs: each name leads to one model (an alias "
                      "of one model does what a pin selector does)"},
        {"peers", "vram serves its own models only"},
        {"performance", "vram status and vram top show the GPUs"},
        {"ui", "vram's dashboard is at /ui"},
        {"store", "vram serve's state is the state = file"},
        {"upstream", "vram's /m/MODEL/... loads its model whatever the path"},
    };
    for (size_t k = 0; k < sizeof none / sizeof none[0]; k++)
        if (lsyaml_get(y, top, none[k].key))
            lsyaml_note(y, &c->notes, "%s: not carried: %s", none[k].key, none[k].why);
    lsyaml_unknown(y, top, known, &c->notes, "");
}

/* One pass over the events: nesting under MAX_DEPTH, nodes under
 * MAX_NODES, one document at least. 0, or -1 with r->err. */
static int bounded(struct lsyaml *r, const char *text, size_t len)
{
    yaml_parser_t p;
    yaml_event_t e;
    if (!yaml_parser_initialize(&p)) {
        lsyaml_fail(r, "out of memory");
        return -1;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    int depth = 0, rc = 0;
    size_t nodes = 0;
    for (bool done = false; !done;) {
        if (!yaml_parser_parse(&p, &e)) {
            lsyaml_fail(r, "not YAML: %s at line %zu, column %zu", p.problem ? p.problem : "an error",
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
            lsyaml_fail(r, "more nested or larger than a llama-swap configuration is (%d levels, %d "
                    "nodes at most)",
                 MAX_DEPTH, MAX_NODES);
            rc = -1;
            break;
        }
    }
    yaml_parser_delete(&p);
    return rc;
}

/* The YAML's content, each scalar on a line of its own (its comments
 * left out): where llama-swap looks for the ${env.NAME} it requires.
 * NULL when the text is no YAML (then the whole text is looked in, as
 * there) or too large. */
static char *content_of(const char *text, size_t len)
{
    yaml_parser_t p;
    yaml_event_t e;
    if (!yaml_parser_initialize(&p))
        return NULL;
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    size_t n = 0, cap = 2 * len + 16, nodes = 0;
    int depth = 0;
    char *out = malloc(cap);
    bool ok = out != NULL;
    for (bool done = false; ok && !done;) {
        if (!yaml_parser_parse(&p, &e)) {
            ok = false;
            break;
        }
        depth += e.type == YAML_MAPPING_START_EVENT || e.type == YAML_SEQUENCE_START_EVENT;
        depth -= e.type == YAML_MAPPING_END_EVENT || e.type == YAML_SEQUENCE_END_EVENT;
        if (depth > MAX_DEPTH)
            ok = false;
        if (e.type == YAML_SCALAR_EVENT) {
            size_t l = e.data.scalar.length;
            if (n + l + 2 > cap || ++nodes > MAX_NODES)
                ok = false;
            else {
                memcpy(out + n, e.data.scalar.value, l);
                n += l;
                out[n++] = '\n';
            }
        }
        done = e.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&e);
    }
    yaml_parser_delete(&p);
    if (!ok) {
        free(out);
        return NULL;
    }
    out[n] = '\0';
    return out;
}

int lsconf_read(const char *text, size_t len, struct lsconf *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->health_timeout = c->start_port = c->unload_timeout = -1;
    err[0] = '\0';
    struct lsyaml *y = calloc(1, sizeof *y);
    if (!y) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    y->err = err;
    y->errlen = errlen;
    yaml_parser_t p;
    yaml_document_t doc;
    bool loaded = false;
    char *filled = NULL, *content = NULL;
    if (len > LSCONF_MAX_BYTES) {
        lsyaml_fail(y, "larger than 1 MiB: not a llama-swap configuration");
    } else {
        content = content_of(text, len);
        filled = lsmacro_env(text, len, content, (size_t)LSCONF_MAX_BYTES * 4, &len, err, errlen);
        if (filled)
            text = filled;
    }
    if (filled && bounded(y, text, len) == 0) {
        if (!yaml_parser_initialize(&p)) {
            lsyaml_fail(y, "out of memory");
        } else {
            yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
            if (!yaml_parser_load(&p, &doc))
                lsyaml_fail(y, "not YAML: %s at line %zu", p.problem ? p.problem : "an error",
                            p.problem_mark.line + 1);
            else
                loaded = true;
            yaml_parser_delete(&p);
        }
    }
    if (loaded) {
        y->doc = &doc;
        read_top(y, c, yaml_document_get_root_node(&doc));
        yaml_document_delete(&doc);
    }
    lsmacros_free(&y->mac);
    free(content);
    free(filled);
    free(y);
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
