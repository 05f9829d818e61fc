/* modelname: the rules of a model's name and its escaped forms. The
 * characters allowed are those of Hugging Face ids and Ollama's names;
 * anything else (a blank, a quote, a control character, '%', '\\') is
 * refused rather than escaped, so that a name is the same text in the
 * configuration, a log line, a Prometheus label and a shell. */
#include "core/modelname.h"

#include <string.h>

static bool allowed(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '-' || c == '_' || c == '.' || c == ':' || c == '/';
}

const char *modelname_check(const char *n)
{
    size_t len = strlen(n);
    if (!len)
        return "empty";
    if (len >= MODELNAME_MAX)
        return "longer than 127 characters";
    for (const char *c = n; *c; c++) {
        unsigned char u = (unsigned char)*c;
        if (u < 0x20 || u == 0x7f)
            return "a control character in it";
        if (!allowed(*c))
            return "letters, digits, '-', '_', '.', ':' and '/' only";
    }
    if (n[0] == '/')
        return "it starts with '/': a name is never a path";
    if (n[len - 1] == '/')
        return "it ends with '/'";
    if (strstr(n, "//"))
        return "'//' in it: each part between '/' has a name";
    if (strstr(n, ".."))
        return "'..' in it: a name never climbs out of a folder";
    /* "." alone as a part: "a/./b", "./a", "a/." */
    for (const char *p = n; p; p = strchr(p, '/')) {
        if (*p == '/')
            p++;
        if (p[0] == '.' && (p[1] == '/' || p[1] == '\0'))
            return "'.' as a part of it";
    }
    return NULL;
}

int modelname_file(const char *n, char *out, size_t len)
{
    size_t at = 0;
    for (const char *c = n; *c; c++) {
        const char *add = *c == '/' ? "%2F" : NULL;
        size_t k = add ? 3 : 1;
        if (at + k >= len)
            return -1;
        memcpy(out + at, add ? add : c, k);
        at += k;
    }
    if (at >= len)
        return -1;
    out[at] = '\0';
    return 0;
}

int modelname_url(const char *n, char *out, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t at = 0;
    for (const unsigned char *c = (const unsigned char *)n; *c; c++) {
        bool plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                     (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.' || *c == '~';
        if (at + (plain ? 1 : 3) >= len)
            return -1;
        if (plain) {
            out[at++] = (char)*c;
        } else {
            out[at++] = '%';
            out[at++] = hex[*c >> 4];
            out[at++] = hex[*c & 15];
        }
    }
    if (at >= len)
        return -1;
    out[at] = '\0';
    return 0;
}

bool modelname_same(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 7 && !strcmp(a + la - 7, ":latest"))
        la -= 7;
    if (lb > 7 && !strcmp(b + lb - 7, ":latest"))
        lb -= 7;
    return la == lb && !strncmp(a, b, la);
}
