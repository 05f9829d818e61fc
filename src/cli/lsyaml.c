/* lsyaml: llama-swap's YAML document, node by node. A YAML alias is a
 * reference to a node read before, never a copy; a merge key (<<: *base)
 * is followed a bounded number of times. */
#include "cli/lsyaml.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_MERGES 8 /* <<: within <<: */

void lsyaml_fail(struct lsyaml *r, const char *fmt, ...)
{
    if (r->err[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, r->errlen, fmt, ap);
    va_end(ap);
}

void lsyaml_note(struct lsyaml *r, struct lsconf_list *l, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (l->n == LSCONF_MAX_LIST)
        return; /* the first ones say enough */
    if (!(l->v[l->n] = strdup(buf)))
        lsyaml_fail(r, "out of memory");
    else
        l->n++;
}

yaml_node_t *lsyaml_node(struct lsyaml *r, int id)
{
    return yaml_document_get_node(r->doc, id);
}

const char *lsyaml_scalar(const yaml_node_t *n)
{
    if (!n || n->type != YAML_SCALAR_NODE)
        return NULL;
    const char *v = (const char *)n->data.scalar.value;
    return strlen(v) == n->data.scalar.length ? v : NULL;
}

static yaml_node_t *get_at(struct lsyaml *r, yaml_node_t *map, const char *key, int merges)
{
    if (!map || map->type != YAML_MAPPING_NODE || r->err[0])
        return NULL;
    yaml_node_t *merged = NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        if (++r->looks > LSYAML_MAX_LOOKS) {
            lsyaml_fail(r, "its merge keys (<<:) ask for more than %d looks at keys, which no "
                           "llama-swap configuration does (aliases of aliases, each merged many "
                           "times): not read",
                        LSYAML_MAX_LOOKS);
            return NULL;
        }
        const char *k = lsyaml_scalar(lsyaml_node(r, p->key));
        if (k && !strcmp(k, key))
            return lsyaml_node(r, p->value);
        if (k && !strcmp(k, "<<"))
            merged = lsyaml_node(r, p->value);
    }
    if (!merged || merges >= MAX_MERGES)
        return NULL;
    if (merged->type == YAML_MAPPING_NODE)
        return get_at(r, merged, key, merges + 1);
    if (merged->type == YAML_SEQUENCE_NODE) /* <<: [*a, *b]: the first that has it */
        for (yaml_node_item_t *i = merged->data.sequence.items.start;
             i < merged->data.sequence.items.top; i++) {
            yaml_node_t *v = get_at(r, lsyaml_node(r, *i), key, merges + 1);
            if (v)
                return v;
        }
    return NULL;
}

yaml_node_t *lsyaml_get(struct lsyaml *r, yaml_node_t *map, const char *key)
{
    return get_at(r, map, key, 0);
}

void lsyaml_unknown(struct lsyaml *r, yaml_node_t *map, const char *const *known,
                    struct lsconf_list *notes, const char *where)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const char *k = lsyaml_scalar(lsyaml_node(r, p->key));
        bool ok = k && !strcmp(k, "<<");
        for (size_t i = 0; k && !ok && known[i]; i++)
            ok = !strcmp(k, known[i]);
        if (!ok)
            lsyaml_note(r, notes, "%s%.80s: not read (vram import does not know it)", where,
                        k ? k : "(a key that is not text)");
    }
}

char *lsyaml_expand(struct lsyaml *r, const char *text, const char *id, bool pid,
                    const char *where)
{
    char e[400];
    char *x = lsmacro_expand(&r->mac, text, id, pid, where, e, sizeof e);
    if (!x)
        lsyaml_fail(r, "%s", e);
    return x;
}

bool lsyaml_long(struct lsyaml *r, yaml_node_t *n, const char *id, const char *where, long lo,
                 long hi, long *out)
{
    const char *v = lsyaml_scalar(n);
    char *x = v ? lsyaml_expand(r, v, id, false, where) : NULL;
    if (v && !x)
        return false;
    char *end;
    long k = x ? strtol(x, &end, 10) : 0;
    bool ok = x && *x && !*end && k >= lo && k <= hi;
    free(x);
    if (!ok) {
        lsyaml_fail(r, "%s: a whole number from %ld to %ld", where, lo, hi);
        return false;
    }
    *out = k;
    return true;
}

bool lsyaml_bool(struct lsyaml *r, yaml_node_t *n, const char *id, const char *where, bool *out)
{
    const char *v = lsyaml_scalar(n);
    char *x = v ? lsyaml_expand(r, v, id, false, where) : NULL;
    if (v && !x)
        return false;
    bool ok = true;
    if (x && (!strcasecmp(x, "true") || !strcasecmp(x, "yes") || !strcasecmp(x, "on")))
        *out = true;
    else if (x && (!strcasecmp(x, "false") || !strcasecmp(x, "no") || !strcasecmp(x, "off")))
        *out = false;
    else
        ok = false;
    free(x);
    if (!ok)
        lsyaml_fail(r, "%s: true or false", where);
    return ok;
}

/* One entry of a list: its text, or (ids) a mapping's id. */
static const char *entry_text(struct lsyaml *r, yaml_node_t *n, bool ids, const char *where,
                              struct lsconf_list *notes)
{
    const char *v = lsyaml_scalar(n);
    if (v || !ids || !n || n->type != YAML_MAPPING_NODE)
        return v;
    v = lsyaml_scalar(lsyaml_get(r, n, "id"));
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; v && notes &&
                                                           p < n->data.mapping.pairs.top;
         p++) {
        const char *k = lsyaml_scalar(lsyaml_node(r, p->key));
        if (k && strcmp(k, "id"))
            lsyaml_note(r, notes, "%s: %.60s's %.40s: not carried (vram's names are names only)",
                        where, v, k);
    }
    return v;
}

void lsyaml_list(struct lsyaml *r, yaml_node_t *n, struct lsconf_list *l, const char *id,
                 const char *where, bool ids, struct lsconf_list *notes)
{
    if (!n)
        return;
    yaml_node_item_t one[1], *start = one, *top = one + 1;
    if (n->type == YAML_SEQUENCE_NODE) {
        start = n->data.sequence.items.start;
        top = n->data.sequence.items.top;
    } else if (!lsyaml_scalar(n)) {
        lsyaml_fail(r, "%s: a list of text", where);
        return;
    }
    for (yaml_node_item_t *i = start; i < top && !r->err[0]; i++) {
        yaml_node_t *e = i == one ? n : lsyaml_node(r, *i);
        const char *v = entry_text(r, e, ids, where, notes);
        if (!v) {
            lsyaml_fail(r, "%s: a list of text%s", where, ids ? " (or of {id: NAME})" : "");
            return;
        }
        if (l->n == LSCONF_MAX_LIST) {
            lsyaml_fail(r, "%s: more than %d entries", where, LSCONF_MAX_LIST);
            return;
        }
        char *x = lsyaml_expand(r, v, id, false, where);
        if (!x)
            return;
        l->v[l->n++] = x;
    }
}
