/* ggufname: a GGUF file's name read as its publishers write it: runs of
 * the name between '-' and '.' ("Qwen2.5-7B-Instruct-Q4_K_M"), the last
 * run that is a quantization being the file's tag; a trailing
 * -00001-of-00003 making it one part of a split model. */
#include "model/ggufname.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static bool ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && !strncasecmp(s + n - k, suffix, k);
}

static bool digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    return n > 0;
}

/* The stem's length once ".gguf" and "-0000P-of-0000N" are taken off. */
static size_t stem(const char *name, size_t n, struct ggufname *out)
{
    n -= 5;
    out->part = out->parts = 1;
    /* "-00001-of-00003": 15 characters */
    if (n > 15 && name[n - 15] == '-' && digits(name + n - 14, 5) &&
        !strncasecmp(name + n - 9, "-of-", 4) && digits(name + n - 5, 5)) {
        unsigned p = 0, c = 0;
        sscanf(name + n - 14, "%5u", &p);
        sscanf(name + n - 5, "%5u", &c);
        if (p >= 1 && c >= 1 && p <= c) {
            out->part = p;
            out->parts = c;
            n -= 15;
        }
    }
    return n;
}

/* A run that names a quantization: Q4_K_M, IQ4_XS, Q8_0, TQ1_0, F16, BF16,
 * FP32, MXFP4. */
static bool is_quant(const char *s, size_t n)
{
    static const char *const plain[] = {"F16", "F32", "BF16", "FP16", "FP32", "MXFP4", "MXFP4_MOE"};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        if (strlen(plain[i]) == n && !strncasecmp(s, plain[i], n))
            return true;
    size_t i = 0;
    if (n > 1 && (toupper((unsigned char)s[0]) == 'I' || toupper((unsigned char)s[0]) == 'T'))
        i = 1;
    if (i + 2 > n || toupper((unsigned char)s[i]) != 'Q' || !isdigit((unsigned char)s[i + 1]) ||
        s[i + 1] == '0' || s[i + 1] > '8')
        return false;
    i += 2;
    if (i == n)
        return true;
    /* then _PART, parts of letters and digits */
    while (i < n) {
        if (s[i] != '_' || i + 1 == n)
            return false;
        i++;
        size_t at = i;
        while (i < n && isalnum((unsigned char)s[i]))
            i++;
        if (i == at)
            return false;
    }
    return true;
}

bool ggufname_parse(const char *name, struct ggufname *out)
{
    memset(out, 0, sizeof *out);
    size_t n = strlen(name);
    if (n <= 5 || !ends_with(name, n, ".gguf"))
        return false;
    n = stem(name, n, out);
    /* the last run between separators that is a quantization */
    size_t end = n;
    while (end > 0) {
        size_t start = end;
        while (start > 0 && name[start - 1] != '-' && name[start - 1] != '.')
            start--;
        if (end > start && is_quant(name + start, end - start) && end - start < sizeof out->quant) {
            for (size_t i = 0; i < end - start; i++)
                out->quant[i] = (char)toupper((unsigned char)name[start + i]);
            out->quant[end - start] = '\0';
            break;
        }
        end = start ? start - 1 : 0;
    }
    return true;
}

bool ggufname_is_model(const char *name)
{
    struct ggufname g;
    return strncasecmp(name, "mmproj", 6) && ggufname_parse(name, &g) && g.part == 1;
}

bool ggufname_matches(const char *name, const char *tag)
{
    struct ggufname g;
    size_t t = strlen(tag);
    if (!t || !ggufname_parse(name, &g))
        return false;
    if (g.quant[0] && !strcasecmp(g.quant, tag))
        return true;
    size_t n = stem(name, strlen(name), &g);
    for (size_t i = 0; i + t <= n; i++) {
        bool before = i == 0 || name[i - 1] == '-' || name[i - 1] == '.';
        bool after = i + t == n || name[i + t] == '-' || name[i + t] == '.';
        if (before && after && !strncasecmp(name + i, tag, t))
            return true;
    }
    return false;
}
