/* top_filter: the filter's words, and a row against them. */
#include "top/top_filter.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/role.h"

static const struct {
    const char *name;
    enum top_fkey key;
} keys[] = {
    {"user", TOP_F_USER}, {"name", TOP_F_NAME},   {"gpu", TOP_F_GPU},
    {"role", TOP_F_ROLE}, {"model", TOP_F_MODEL}, {"pid", TOP_F_PID},
};

static int term(const char *w, size_t len, struct top_fterm *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    if (len && w[0] == '!')
        t->neg = true, w++, len--;
    const char *colon = memchr(w, ':', len);
    size_t klen = colon ? (size_t)(colon - w) : 0;
    const char *v = colon ? colon + 1 : w;
    size_t vlen = len - (size_t)(v - w);
    t->key = TOP_F_TEXT;
    if (colon) {
        size_t k = 0;
        while (k < sizeof keys / sizeof keys[0] &&
               (strlen(keys[k].name) != klen || strncmp(keys[k].name, w, klen)))
            k++;
        if (k == sizeof keys / sizeof keys[0]) {
            snprintf(err, errlen,
                     "'%.*s': no such filter; use user:, name:, gpu:, role:, model:, pid: or a "
                     "word",
                     (int)klen, w);
            return -1;
        }
        t->key = keys[k].key;
    }
    if (vlen == 0 || vlen >= sizeof t->val) {
        snprintf(err, errlen, "'%.*s': give a value after the colon (at most %zu characters)",
                 (int)len, w, sizeof t->val - 1);
        return -1;
    }
    snprintf(t->val, sizeof t->val, "%.*s", (int)vlen, v);
    if (t->key == TOP_F_GPU || t->key == TOP_F_PID) {
        char *end;
        unsigned long n = strtoul(t->val, &end, 10);
        if (!isdigit((unsigned char)t->val[0]) || *end || n > 0xffffffffUL) {
            snprintf(err, errlen, "'%s': %s takes a number", t->val,
                     t->key == TOP_F_GPU ? "gpu:" : "pid:");
            return -1;
        }
        t->num = (unsigned)n;
    }
    if (t->key == TOP_F_ROLE && strcmp(t->val, "display") && strcmp(t->val, "workload") &&
        strcmp(t->val, "other")) {
        snprintf(err, errlen, "'%s': role: is display, workload or other", t->val);
        return -1;
    }
    return 0;
}

int top_filter_parse(const char *text, struct top_filter *f, char *err, size_t errlen)
{
    struct top_filter nf = {.n = 0};
    const char *p = text;
    for (;;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        size_t len = strcspn(p, " ");
        if (nf.n == TOP_FILTER_TERMS) {
            snprintf(err, errlen, "at most %d words in a filter", TOP_FILTER_TERMS);
            return -1;
        }
        if (term(p, len, &nf.t[nf.n], err, errlen) < 0)
            return -1;
        nf.n++;
        p += len;
    }
    *f = nf;
    return 0;
}

/* needle in hay, letters of either case (no strcasestr on Windows) */
static bool has(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t k = 0;
        while (k < n && hay[k] &&
               tolower((unsigned char)hay[k]) == tolower((unsigned char)needle[k]))
            k++;
        if (k == n)
            return true;
    }
    return n == 0;
}

static bool hit(const struct top_fterm *t, const struct top_row *r)
{
    const struct snap_proc *p = &r->proc;
    switch (t->key) {
    case TOP_F_USER:
        return p->host_known && !strcmp(p->user, t->val);
    case TOP_F_NAME:
        return has(p->name, t->val) || has(p->cmdline, t->val);
    case TOP_F_GPU:
        return !r->context && r->gpu == t->num;
    case TOP_F_ROLE:
        return !r->context && !strcmp(role_name(p->role), t->val);
    case TOP_F_MODEL:
        return !strcmp(p->model, t->val);
    case TOP_F_PID:
        return p->pid == t->num;
    default:
        return has(p->name, t->val) || has(p->cmdline, t->val) ||
               (p->host_known && has(p->user, t->val));
    }
}

bool top_filter_match(const struct top_filter *f, const struct top_row *r)
{
    /* each key: any of its plain terms, and none of its negated ones */
    for (size_t i = 0; i < f->n; i++) {
        const struct top_fterm *t = &f->t[i];
        if (t->neg) {
            if (hit(t, r))
                return false;
            continue;
        }
        bool any = false, first = true;
        for (size_t j = 0; j < f->n; j++) {
            if (f->t[j].key != t->key || f->t[j].neg)
                continue;
            if (j < i)
                first = false;
            any |= hit(&f->t[j], r);
        }
        if (first && !any)
            return false;
    }
    return true;
}
