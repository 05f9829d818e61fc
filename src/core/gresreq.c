/* gresreq: a job's GRES request, as slurmctld keeps it.
 *
 * The text comes from slurmctld (the job's record), and the user wrote
 * most of it: every entry is bounded, every count checked for overflow, and
 * an entry that is not of the forms Slurm writes is refused rather than
 * half read. */
#include "core/gresreq.h"

#include <stdio.h>
#include <string.h>

int gresreq_count(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0;
    size_t i = 0;
    if (len == 0 || s[0] < '0' || s[0] > '9')
        return -1;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    unsigned shift = 0;
    if (i < len) {
        const char *units = "KMGTP", *u = NULL;
        char c = s[i];
        if (c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        for (const char *k = units; *k && !u; k++)
            if (*k == c)
                u = k;
        if (!u || i + 1 != len)
            return -1;
        shift = 10 * (unsigned)(u - units + 1);
    }
    if (shift && v > (UINT64_MAX >> shift))
        return -1;
    *out = v << shift;
    return 0;
}

int gresreq_gpu_of(const char *type)
{
    unsigned n = 0;
    int len = 0;
    if (strncmp(type, "gpu", 3) || type[3] < '0' || type[3] > '9' ||
        sscanf(type + 3, "%u%n", &n, &len) != 1 || type[3 + len] != '\0' || n > 4096)
        return -1;
    return (int)n;
}

/* One entry without its "gres:" prefix: NAME, NAME:COUNT, NAME:TYPE or
 * NAME:TYPE:COUNT. 0 and its parts, 1 for an entry of another name, -1
 * when it is none of those. */
static int entry(const char *e, size_t len, const char *name, struct gresreq *one)
{
    const char *part[3];
    size_t plen[3], n = 0;
    for (size_t i = 0, start = 0; i <= len; i++) {
        if (i < len && e[i] != ':')
            continue;
        if (n == 3)
            return strlen(name) == plen[0] && !memcmp(part[0], name, plen[0]) ? -1 : 1;
        part[n] = e + start;
        plen[n++] = i - start;
        start = i + 1;
    }
    if (plen[0] != strlen(name) || memcmp(part[0], name, plen[0]))
        return 1;
    memset(one, 0, sizeof *one);
    one->found = true;
    one->count = 1;
    size_t type = 0; /* the part that is the type, 0: none */
    if (n == 2 && gresreq_count(part[1], plen[1], &one->count) < 0) {
        if (plen[1] && part[1][0] >= '0' && part[1][0] <= '9')
            return -1; /* a count that overflows, or has a unit Slurm has not */
        type = 1;
    }
    if (n == 3) {
        type = 1;
        if (gresreq_count(part[2], plen[2], &one->count) < 0)
            return -1;
    }
    if (type) {
        if (plen[type] == 0 || plen[type] >= sizeof one->type)
            return -1;
        memcpy(one->type, part[type], plen[type]);
        one->type[plen[type]] = '\0';
    }
    return 0;
}

int gresreq_parse(const char *s, const char *name, struct gresreq *out)
{
    memset(out, 0, sizeof *out);
    while (s && *s) {
        size_t len = strcspn(s, ",");
        const char *e = s;
        size_t elen = len;
        if (elen > 5 && (!strncmp(e, "gres:", 5) || !strncmp(e, "gres/", 5))) {
            e += 5;
            elen -= 5;
        }
        struct gresreq one;
        int rc = entry(e, elen, name, &one);
        if (rc < 0)
            return -1;
        if (rc == 0) {
            if (out->count > UINT64_MAX - one.count)
                return -1;
            out->count += one.count;
            if (!out->found)
                snprintf(out->type, sizeof out->type, "%s", one.type);
            else if (strcmp(out->type, one.type))
                out->type[0] = '\0';
            out->found = true;
        }
        s += len;
        if (*s == ',')
            s++;
    }
    return 0;
}
