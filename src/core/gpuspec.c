/* gpuspec: lists of GPUs and of sizes per GPU, as users type them. Every
 * list is split at commas into a bounded copy first: no entry, however
 * long, is read past its comma or its buffer. */
#include "core/gpuspec.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"

#define LIST_MAX 4096 /* longest list read: 64 UUIDs with room to spare */

/* The entries of s, each trimmed, in parts (pointers into buf); -1 for an
 * empty entry, a list too long, or more than max entries. */
static int split(const char *s, char *buf, size_t len, char **parts, unsigned max, unsigned *n)
{
    size_t sl = strlen(s);
    if (sl == 0 || sl >= len)
        return -1;
    memcpy(buf, s, sl + 1);
    *n = 0;
    for (char *p = buf;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        char *e = p + strlen(p);
        while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
            *--e = '\0';
        if (!*p || *n >= max)
            return -1;
        parts[(*n)++] = p;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

/* A whole decimal number below limit, digits only. */
static int number(const char *s, unsigned limit, unsigned *out)
{
    if (!*s)
        return -1;
    unsigned long v = 0;
    for (const char *p = s; *p; p++) {
        if (!isdigit((unsigned char)*p))
            return -1;
        v = v * 10 + (unsigned)(*p - '0');
        if (v >= limit)
            return -1;
    }
    *out = (unsigned)v;
    return 0;
}

int gpuspec_parse_gpus(const char *s, struct gpuspec_gpus *out)
{
    char buf[LIST_MAX], *parts[GPUSPEC_MAX];
    unsigned n;
    memset(out, 0, sizeof *out);
    if (!s || split(s, buf, sizeof buf, parts, GPUSPEC_MAX, &n) < 0)
        return -1;
    if (n == 1 && !strchr(s, ',') && strspn(parts[0], "0123456789") == strlen(parts[0])) {
        unsigned count; /* digits alone are how many, never a name */
        if (number(parts[0], GPUSPEC_MAX + 1, &count) < 0 || count == 0)
            return -1;
        out->count = count;
        return 0;
    }
    for (unsigned i = 0; i < n; i++) {
        if (strlen(parts[i]) >= GPUSPEC_NAME)
            return -1;
        snprintf(out->name[i], GPUSPEC_NAME, "%s", parts[i]);
    }
    out->count = n;
    out->named = true;
    return 0;
}

int gpuspec_parse_sizes(const char *s, struct gpuspec_sizes *out)
{
    char buf[LIST_MAX], *parts[GPUSPEC_MAX];
    unsigned n;
    memset(out, 0, sizeof *out);
    if (!s || split(s, buf, sizeof buf, parts, GPUSPEC_MAX, &n) < 0)
        return -1;
    bool seen[GPUSPEC_MAX] = {false};
    for (unsigned i = 0; i < n; i++) {
        char *colon = strchr(parts[i], ':');
        bool keyed = colon != NULL;
        if (i > 0 && keyed != out->keyed)
            return -1;
        out->keyed = keyed;
        const char *size = parts[i];
        if (keyed) {
            *colon = '\0';
            char *e = colon;
            while (e > parts[i] && (e[-1] == ' ' || e[-1] == '\t'))
                *--e = '\0';
            unsigned k;
            if (number(parts[i], GPUSPEC_MAX, &k) < 0 || seen[k])
                return -1;
            seen[k] = true;
            out->key[i] = k;
            size = colon + 1;
        }
        if (units_parse_size(size, &out->size[i]) < 0 || out->size[i] == 0)
            return -1;
    }
    out->n = n;
    return 0;
}

uint64_t gpuspec_size_for(const struct gpuspec_sizes *z, unsigned pos, unsigned gpu)
{
    if (gpuspec_uniform(z))
        return z->size[0];
    if (!z->keyed)
        return pos < z->n ? z->size[pos] : 0;
    for (unsigned i = 0; i < z->n; i++)
        if (z->key[i] == gpu)
            return z->size[i];
    return 0;
}

void gpuspec_fmt_keys(const struct gpuspec_sizes *z, char *out, size_t len)
{
    size_t at = 0;
    if (len)
        out[0] = '\0';
    for (unsigned i = 0; z->keyed && i < z->n && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%s%u", i ? "," : "", z->key[i]);
}
