/* textsafe: a terminal's commands taken out of text.
 *
 * Decoding is by hand, strictly: overlong forms, surrogates and code
 * points past U+10FFFF are not UTF-8, and each of their bytes is one '?'
 * (a terminal would not agree with us on where such a sequence ends). */
#include "core/textsafe.h"

#include <stdbool.h>
#include <stdint.h>

/* The length of the valid UTF-8 character at s (at most n bytes), its code
 * point in *cp; 0 when s does not start one. */
static size_t decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
        len = 2, v = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, v = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return len;
}

static bool harmful(uint32_t cp)
{
    return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) ||
           (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

char *textsafe_copy(const char *in, size_t n, char *out, size_t len)
{
    const unsigned char *s = (const unsigned char *)in;
    size_t at = 0;
    if (len == 0)
        return out;
    for (size_t i = 0; i < n && s[i];) {
        uint32_t cp;
        size_t k = decode(s + i, n - i, &cp);
        size_t w = k && !harmful(cp) ? k : 1;
        if (at + w >= len)
            break;
        if (k && !harmful(cp)) {
            for (size_t j = 0; j < k; j++)
                out[at + j] = (char)s[i + j];
        } else {
            out[at] = '?';
        }
        at += w;
        i += k ? k : 1;
    }
    out[at] = '\0';
    return out;
}

char *textsafe(char *s)
{
    unsigned char *p = (unsigned char *)s;
    size_t at = 0, n = 0;
    while (p[n])
        n++;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = decode(p + i, n - i, &cp);
        if (k && !harmful(cp)) {
            for (size_t j = 0; j < k; j++)
                p[at++] = p[i + j];
            i += k;
        } else {
            p[at++] = '?';
            i += k ? k : 1;
        }
    }
    p[at] = '\0';
    return s;
}
