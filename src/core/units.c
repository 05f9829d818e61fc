/* units: parsing and printing sizes and durations the way users type them. */
#include "core/units.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* strtod accepts "inf", "nan" and hex; a size or a duration is plain decimal. */
static int parse_decimal(const char *s, double *value, const char **end)
{
    const char *p = s;
    if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
        return -1;
    while (isdigit((unsigned char)*p) || *p == '.')
        p++;
    char *e;
    double v = strtod(s, &e);
    if (e != p || !isfinite(v) || v < 0)
        return -1;
    *value = v;
    *end = p;
    return 0;
}

struct unit {
    const char *suffix;
    double mult;
};

/* "<decimal> [unit]" with the unit one of table's (case-insensitive; ""
 * for none); the number times the unit's multiplier into *out. */
static int parse_with_unit(const char *s, const struct unit *table, size_t n, double *out)
{
    if (!s)
        return -1;
    double v;
    const char *p;
    if (parse_decimal(skip_space(s), &v, &p) < 0)
        return -1;
    p = skip_space(p);
    const char *q = p;
    while (isalpha((unsigned char)*q))
        q++;
    if (*skip_space(q) != '\0')
        return -1;
    size_t len = (size_t)(q - p);
    for (size_t i = 0; i < n; i++)
        if (strlen(table[i].suffix) == len && strncasecmp(p, table[i].suffix, len) == 0) {
            *out = v * table[i].mult;
            return 0;
        }
    return -1;
}

int units_parse_size(const char *s, uint64_t *out)
{
    static const struct unit table[] = {
        {"", 1},
        {"b", 1},
        {"k", UNITS_KiB},
        {"kb", UNITS_KiB},
        {"kib", UNITS_KiB},
        {"m", UNITS_MiB},
        {"mb", UNITS_MiB},
        {"mib", UNITS_MiB},
        {"g", UNITS_GiB},
        {"gb", UNITS_GiB},
        {"gib", UNITS_GiB},
        {"t", UNITS_GiB * 1024.0},
        {"tb", UNITS_GiB * 1024.0},
        {"tib", UNITS_GiB * 1024.0},
    };
    double bytes;
    if (parse_with_unit(s, table, sizeof table / sizeof table[0], &bytes) < 0 ||
        bytes >= 18446744073709551615.0)
        return -1;
    *out = (uint64_t)llround(bytes);
    return 0;
}

int units_parse_tokens(const char *s, uint64_t *out)
{
    static const struct unit table[] = {{"", 1}, {"k", 1024}, {"m", 1024 * 1024}};
    double n;
    if (parse_with_unit(s, table, sizeof table / sizeof table[0], &n) < 0 || n >= 1e15 ||
        n != floor(n))
        return -1; /* "1.5" tokens is a typo; "1.5k" is 1536 */
    *out = (uint64_t)n;
    return 0;
}

int units_parse_seconds(const char *s, double *out)
{
    static const struct unit table[] = {{"", 1},   {"s", 1},    {"ms", 1e-3},
                                        {"m", 60}, {"min", 60}, {"h", 3600}};
    if (!s)
        return -1;
    /* Go's compound form too ("1h30m", which Ollama's keep_alive takes):
     * each number with its unit, summed */
    double sum = 0;
    const char *p = skip_space(s);
    do {
        const char *q = p;
        while (*q && !isalpha((unsigned char)*q))
            q++;
        while (isalpha((unsigned char)*q))
            q++;
        char part[64];
        double v;
        if (q == p || (size_t)(q - p) >= sizeof part ||
            (!isalpha((unsigned char)q[-1]) && p != skip_space(s)))
            return -1; /* a number without its unit is seconds alone ("90"), not "1h30" */
        memcpy(part, p, (size_t)(q - p));
        part[q - p] = '\0';
        if (parse_with_unit(part, table, sizeof table / sizeof table[0], &v) < 0)
            return -1;
        sum += v;
        p = q;
    } while (*skip_space(p));
    *out = sum;
    return 0;
}

const char *units_fmt_duration(double seconds, char *buf, size_t len)
{
    double r = seconds < 0 ? 0 : seconds;
    unsigned long long whole = (unsigned long long)r;
    if ((double)whole != r)
        snprintf(buf, len, "%.1fs", r);
    else if (whole && whole % 3600 == 0)
        snprintf(buf, len, "%lluh", whole / 3600);
    else if (whole && whole % 60 == 0)
        snprintf(buf, len, "%llum", whole / 60);
    else
        snprintf(buf, len, "%llus", whole);
    return buf;
}

const char *units_fmt_size(uint64_t bytes, char *buf, size_t len)
{
    static const char *names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, len, v < 10 ? "%.2f %s" : "%.1f %s", v, names[u]);
    return buf;
}

const char *units_fmt_gib(uint64_t bytes, char *buf, size_t len)
{
    snprintf(buf, len, "%.2f", (double)bytes / (double)UNITS_GiB);
    return buf;
}
