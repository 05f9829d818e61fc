/* lsmacro: llama-swap's macros. Every result is built in one pass, never
 * read again for what it inserted (a macro whose value names itself, an ID
 * that looks like ${MODEL_ID}, expand once), and bounded. */
#include "cli/lsmacro.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sb {
    char *p;
    size_t n, cap, max;
};

static bool sb_add(struct sb *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->max)
        return false;
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return false;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
    return true;
}

static const char *value_of(const struct lsmacro *m, size_t n, const char *name)
{
    for (size_t i = n; i-- > 0;) /* the last definition wins */
        if (!strcmp(m[i].name, name))
            return m[i].value;
    return NULL;
}

char *lsmacro_expand(const struct lsmacros *m, const char *text, const char *id, bool pid,
                     const char *where, char *err, size_t errlen)
{
    struct sb b = {NULL, 0, 0, LSMACRO_MAX_STRING};
    if (!sb_add(&b, "", 0)) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    for (const char *p = text; *p;) {
        const char *s = strstr(p, "${");
        const char *e = s ? strchr(s + 2, '}') : NULL;
        size_t nl = e ? (size_t)(e - s - 2) : 0;
        bool named = e && nl > 0 && nl < 80; /* llama-swap's [a-zA-Z0-9_-]+ */
        for (size_t k = 0; named && k < nl; k++)
            named = isalnum((unsigned char)s[2 + k]) || s[2 + k] == '_' || s[2 + k] == '-';
        if (!s || !named) { /* no macro here: as it is */
            size_t n = s ? (size_t)(s - p) + 2 : strlen(p);
            if (!sb_add(&b, p, n))
                goto long_;
            p += n;
            continue;
        }
        char name[80];
        memcpy(name, s + 2, nl);
        name[nl] = '\0';
        const char *v = NULL;
        if (!strcmp(name, "PORT") || (pid && !strcmp(name, "PID")) ||
            (!id && !strcmp(name, "MODEL_ID"))) {
            v = NULL; /* vram serve's, or the model's once known */
        } else if (!strcmp(name, "MODEL_ID")) {
            v = id;
        } else if (!(v = value_of(m->local, m->nlocal, name)) &&
                   !(v = value_of(m->global, m->nglobal, name))) {
            snprintf(err, errlen,
                     "%s: ${%s}: no such macro (macros: of the file or the model, defined before "
                     "it is used; ${env.NAME}; ${PORT}; ${MODEL_ID}), as llama-swap says too",
                     where, name);
            free(b.p);
            return NULL;
        }
        /* a file's macro may hold ${MODEL_ID}: the model's, in one pass */
        bool ok = sb_add(&b, p, (size_t)(s - p));
        for (const char *q = v ? v : ""; ok && v && *q;) {
            const char *mid = id && v != id ? strstr(q, "${MODEL_ID}") : NULL;
            size_t n = mid ? (size_t)(mid - q) : strlen(q);
            ok = sb_add(&b, q, n) && (!mid || sb_add(&b, id, strlen(id)));
            q += n + (mid ? 11 : 0);
        }
        if (!ok || (!v && !sb_add(&b, s, nl + 3)))
            goto long_;
        p = e + 1;
    }
    return b.p;
long_:
    free(b.p);
    snprintf(err, errlen, "%s: longer than %d characters once its macros are expanded", where,
             LSMACRO_MAX_STRING - 1);
    return NULL;
}

/* Whether scan holds ${env.NAME} (name n bytes). */
static bool uses(const char *scan, const char *name, size_t n)
{
    for (const char *p = scan; (p = strstr(p, "${env.")); p += 6)
        if (!strncmp(p + 6, name, n) && p[6 + n] == '}')
            return true;
    return false;
}

char *lsmacro_env(const char *text, size_t len, const char *scan, size_t max, size_t *out_len,
                  char *err, size_t errlen)
{
    struct sb b = {NULL, 0, 0, max};
    size_t at = 0;
    while (at < len) {
        const char *s = memmem(text + at, len - at, "${env.", 6);
        size_t n = s ? (size_t)(s - text) : len, k = 0;
        if (s) /* [a-zA-Z_][a-zA-Z0-9_]* then } */
            while (n + 6 + k < len && (isalpha((unsigned char)s[6 + k]) || s[6 + k] == '_' ||
                                       (k && isdigit((unsigned char)s[6 + k]))))
                k++;
        bool macro = s && k && n + 6 + k < len && s[6 + k] == '}';
        char name[128];
        if (macro && k >= sizeof name) {
            snprintf(err, errlen, "${env.%.60s...}: a name too long", s + 6);
            free(b.p);
            return NULL;
        }
        if (macro) {
            memcpy(name, s + 6, k);
            name[k] = '\0';
            macro = uses(scan ? scan : text, name, k); /* a comment's is left as it is */
        }
        if (!sb_add(&b, text + at, (macro ? n : s ? n + 6 : len) - at))
            goto big;
        if (!macro) {
            at = s ? n + 6 : len;
            continue;
        }
        const char *v = getenv(name);
        if (!v || strpbrk(v, "\r\n")) {
            snprintf(err, errlen,
                     v ? "${env.%s}: %s holds a line break (llama-swap refuses it too): a value "
                         "of one line"
                       : "${env.%s}: %s is not set (llama-swap refuses the file too): set it, or "
                         "write its value",
                     name, name);
            free(b.p);
            return NULL;
        }
        for (const char *q = v; *q; q++) { /* as llama-swap: for a "..." string */
            if ((*q == '\\' || *q == '"') && !sb_add(&b, "\\", 1))
                goto big;
            if (!sb_add(&b, q, 1))
                goto big;
        }
        at = n + 6 + k + 1;
    }
    if (!sb_add(&b, "", 0))
        goto big;
    *out_len = b.n;
    return b.p;
big:
    free(b.p);
    snprintf(err, errlen, "larger than %zu MiB once ${env.NAME} is filled in", max >> 20);
    return NULL;
}

char *lsmacro_command(const char *v)
{
    size_t n = strlen(v);
    char *out = malloc(n + 1);
    if (!out)
        return NULL;
    size_t at = 0;
    bool first = true;
    for (const char *l = v;;) {
        const char *e = strchr(l, '\n');
        size_t ll = e ? (size_t)(e - l) : strlen(l), s = strspn(l, " \t\r\v\f");
        if (s >= ll || l[s] != '#') {
            if (!first)
                out[at++] = '\n';
            memcpy(out + at, l, ll);
            at += ll;
            first = false;
        }
        if (!e)
            break;
        l = e + 1;
    }
    out[at] = '\0';
    return out;
}

void lsmacros_free(struct lsmacros *m)
{
    for (size_t i = 0; i < m->nglobal; i++)
        free(m->global[i].value);
    for (size_t i = 0; i < m->nlocal; i++)
        free(m->local[i].value);
    m->nglobal = m->nlocal = 0;
}
