/* lsroute: llama-swap's groups, matrix and routing:, as its load.go
 * reads them: the older top-level groups:/matrix: or routing.router, never
 * both; routing.router.use picks the groups (group, the default) or the
 * matrix; routing.scheduler.use is fifo, whose priorities name models. */
#include "cli/lsroute.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* groups: NAME: {swap, exclusive, persistent, members} into c->groups;
 * where names the mapping in the file (groups, or routing.router.settings.groups) */
static void read_groups(struct lsyaml *y, struct lsconf *c, yaml_node_t *g, const char *where)
{
    if (!g)
        return;
    if (g->type != YAML_MAPPING_NODE) {
        lsyaml_fail(y, "%s: a mapping of NAME: {swap, exclusive, persistent, members}", where);
        return;
    }
    static const char *const known[] = {"swap", "exclusive", "persistent", "members", NULL};
    for (yaml_node_pair_t *p = g->data.mapping.pairs.start;
         p < g->data.mapping.pairs.top && !y->err[0]; p++) {
        const char *k = lsyaml_scalar(lsyaml_node(y, p->key));
        yaml_node_t *v = lsyaml_node(y, p->value);
        char at[160];
        snprintf(at, sizeof at, "%s.%.100s", where, k ? k : "?");
        if (!k || !v || v->type != YAML_MAPPING_NODE) {
            lsyaml_fail(y, "%s: NAME: {swap, exclusive, persistent, members}", at);
            return;
        }
        if (c->ngroups == LSCONF_MAX_LIST) {
            lsyaml_fail(y, "%s: more than %d", where, LSCONF_MAX_LIST);
            return;
        }
        struct lsconf_group *o = &c->groups[c->ngroups++];
        o->swap = o->exclusive = true; /* llama-swap's defaults */
        if (!(o->name = strdup(k))) {
            lsyaml_fail(y, "out of memory");
            return;
        }
        static const char *const flag[] = {"swap", "exclusive", "persistent"};
        bool *field[] = {&o->swap, &o->exclusive, &o->persistent};
        for (size_t f = 0; f < 3; f++) {
            char fat[200];
            snprintf(fat, sizeof fat, "%s.%s", at, flag[f]);
            yaml_node_t *n = lsyaml_get(y, v, flag[f]);
            if (n)
                lsyaml_bool(y, n, NULL, fat, field[f]);
        }
        char mat[200];
        snprintf(mat, sizeof mat, "%s.members", at);
        lsyaml_list(y, lsyaml_get(y, v, "members"), &o->members, NULL, mat, false, NULL);
        snprintf(mat, sizeof mat, "%s.", at);
        lsyaml_unknown(y, v, known, &c->notes, mat);
    }
}

static int model_index(const struct lsconf *c, const char *id)
{
    for (size_t i = 0; i < c->nmodels; i++)
        if (!strcmp(c->models[i].id, id))
            return (int)i;
    return -1;
}

/* A model's ID, or an alias of one (as llama-swap's RealModelName): its
 * index, or -1. */
static int model_or_alias(const struct lsconf *c, const char *name)
{
    int i = model_index(c, name);
    for (size_t m = 0; i < 0 && m < c->nmodels; m++)
        for (size_t a = 0; a < c->models[m].aliases.n; a++)
            if (!strcmp(c->models[m].aliases.v[a], name))
                return (int)m;
    return i;
}

/* Each group's members to their models: a model in two groups, or twice
 * in one, is an error, as in llama-swap; a member that is no model, a note. */
static void link_groups(struct lsyaml *y, struct lsconf *c, const char *where)
{
    for (size_t g = 0; g < c->ngroups && !y->err[0]; g++)
        for (size_t k = 0; k < c->groups[g].members.n; k++) {
            const char *mem = c->groups[g].members.v[k];
            int i = model_index(c, mem);
            if (i < 0) {
                lsyaml_note(y, &c->notes, "%s.%.100s: %.100s is no model of the file: left out",
                            where, c->groups[g].name, mem);
            } else if (c->models[i].group >= 0) {
                lsyaml_fail(y, "%s.%.100s: %.100s is %s: a model is in one group, once",
                            where, c->groups[g].name, mem,
                            c->models[i].group == (int)g ? "there twice" : "in another group too");
                return;
            } else {
                c->models[i].group = (int)g;
            }
        }
}

/* routing.scheduler: fifo, and its priorities (higher first there) as
 * vram's priority (higher evicted last; 5 its default as 0 is
 * llama-swap's): 5 + N, within vram's 0 to 100. */
static void read_scheduler(struct lsyaml *y, struct lsconf *c, yaml_node_t *s)
{
    if (!s)
        return;
    const char *use = lsyaml_scalar(lsyaml_get(y, s, "use"));
    if (use && *use && strcmp(use, "fifo")) {
        lsyaml_fail(y, "routing.scheduler.use: '%.60s': llama-swap knows fifo only", use);
        return;
    }
    yaml_node_t *settings = lsyaml_get(y, s, "settings");
    yaml_node_t *fifo = lsyaml_get(y, settings, "fifo");
    yaml_node_t *pr = lsyaml_get(y, fifo, "priority");
    if (pr && pr->type != YAML_MAPPING_NODE) {
        lsyaml_fail(y, "routing.scheduler.settings.fifo.priority: a mapping of MODEL: NUMBER");
        return;
    }
    for (yaml_node_pair_t *p = pr ? pr->data.mapping.pairs.start : NULL;
         p && p < pr->data.mapping.pairs.top && !y->err[0]; p++) {
        const char *k = lsyaml_scalar(lsyaml_node(y, p->key));
        char at[200];
        snprintf(at, sizeof at, "routing.scheduler.settings.fifo.priority.%.100s", k ? k : "?");
        int i = k ? model_or_alias(c, k) : -1;
        long v;
        if (!lsyaml_long(y, lsyaml_node(y, p->value), NULL, at, -1000000, 1000000, &v))
            return;
        if (i < 0) { /* llama-swap refuses the file; its own example has one */
            lsyaml_note(y, &c->notes, "%s: no model or alias of the file: left out", at);
            continue;
        }
        c->models[i].priority = v < -5 ? 0 : v > 95 ? 100 : 5 + v;
    }
    static const char *const sk[] = {"use", "settings", NULL}, *const st[] = {"fifo", NULL},
                             *const fk[] = {"priority", NULL};
    lsyaml_unknown(y, s, sk, &c->notes, "routing.scheduler.");
    lsyaml_unknown(y, settings, st, &c->notes, "routing.scheduler.settings.");
    lsyaml_unknown(y, fifo, fk, &c->notes, "routing.scheduler.settings.fifo.");
}

void lsroute_read(struct lsyaml *y, struct lsconf *c, yaml_node_t *top)
{
    yaml_node_t *routing = lsyaml_get(y, top, "routing");
    yaml_node_t *router = lsyaml_get(y, routing, "router");
    yaml_node_t *settings = lsyaml_get(y, router, "settings");
    yaml_node_t *old_groups = lsyaml_get(y, top, "groups"), *old_matrix = lsyaml_get(y, top, "matrix");
    yaml_node_t *groups = lsyaml_get(y, settings, "groups"), *matrix = lsyaml_get(y, settings, "matrix");
    const char *use = lsyaml_scalar(lsyaml_get(y, router, "use"));
    bool old = old_matrix || (old_groups && old_groups->type == YAML_MAPPING_NODE &&
                              old_groups->data.mapping.pairs.top >
                                  old_groups->data.mapping.pairs.start);
    if (old && ((use && *use) || groups || matrix)) {
        lsyaml_fail(y, "groups:/matrix: at the top and routing.router both (llama-swap refuses "
                       "it too): move the top-level ones into routing.router.settings");
        return;
    }
    if (old) {
        read_groups(y, c, old_groups, "groups");
        link_groups(y, c, "groups");
        c->matrix = old_matrix != NULL;
        if (old_groups && old_matrix)
            lsyaml_fail(y, "groups: and matrix: both (llama-swap refuses it too): one of them");
    } else if (!use || !*use || !strcmp(use, "group")) {
        read_groups(y, c, groups, "routing.router.settings.groups");
        link_groups(y, c, "routing.router.settings.groups");
        if (matrix)
            lsyaml_note(y, &c->notes, "routing.router.settings.matrix: not used (use: group)");
    } else if (!strcmp(use, "matrix")) {
        if (!matrix)
            lsyaml_fail(y, "routing.router.use is matrix but routing.router.settings.matrix is "
                           "not there (llama-swap refuses it too)");
        c->matrix = true;
        if (groups)
            lsyaml_note(y, &c->notes, "routing.router.settings.groups: not used (use: matrix)");
    } else {
        lsyaml_fail(y, "routing.router.use: '%.60s': group or matrix, as llama-swap knows", use);
    }
    if (!y->err[0])
        read_scheduler(y, c, lsyaml_get(y, routing, "scheduler"));
    static const char *const rk[] = {"router", "scheduler", NULL}, *const uk[] = {"use", "settings",
                                                                                  NULL},
                             *const sk[] = {"groups", "matrix", NULL};
    lsyaml_unknown(y, routing, rk, &c->notes, "routing.");
    lsyaml_unknown(y, router, uk, &c->notes, "routing.router.");
    lsyaml_unknown(y, settings, sk, &c->notes, "routing.router.settings.");
}
