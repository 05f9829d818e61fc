/* jscan: JSON as a stream of tokens (RFC 8259) from a bounded reader. The
 * grammar is checked as strictly as jansson checks it: UTF-8 validated,
 * escapes and surrogate pairs decoded, no \u0000, no trailing commas,
 * nothing after the document but spaces. Memory is constant: one string
 * buffer and a stack of open brackets (JSCAN_DEPTH).
 *
 * Speed is what bounds a hostile file here (a 100 MiB safetensors header is
 * allowed): runs of plain bytes, spaces and digits are taken from the
 * reader's window at once, the position is a byte offset (line and column
 * are counted again only for an error message), and values nobody reads are
 * skipped by their brackets and strings alone (jscan_skip, jscan_finish). */
#include "model/jscan.h"

#include <stdio.h>
#include <string.h>

enum { ST_VALUE, ST_VALUE_OR_END, ST_KEY, ST_KEY_OR_END, ST_COLON, ST_AFTER, ST_DONE };

void jscan_init(struct jscan *j, struct reader *r)
{
    memset(j, 0, sizeof *j);
    j->r = r;
    j->start = r->pos;
    j->state = ST_VALUE;
}

static enum jscan_tok fail(struct jscan *j, const char *what)
{
    /* where: the lines and columns up to here, counted again */
    uint64_t at = j->r->pos;
    j->line = 1;
    j->col = 0;
    j->r->pos = j->start;
    while (j->r->pos < at) {
        int c = reader_getc(j->r);
        if (c < 0)
            break;
        if (c == '\n')
            j->line++, j->col = 0;
        else
            j->col++;
    }
    j->r->pos = at;
    snprintf(j->err, sizeof j->err, "line %u, column %u: %s", j->line, j->col, what);
    j->state = ST_DONE;
    return JSCAN_ERR;
}

static inline int next_byte(struct jscan *j)
{
    return reader_getc(j->r);
}

/* The byte after the current one, not consumed (numbers end at it). */
static inline int peek(struct jscan *j)
{
    int c = reader_getc(j->r);
    if (c >= 0)
        j->r->pos--;
    return c;
}

static void keep(struct jscan *j, unsigned char c)
{
    if (j->len < sizeof j->str - 1)
        j->str[j->len] = (char)c;
    else
        j->cut = true;
    j->len++;
}

static int hex4(struct jscan *j)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int c = next_byte(j), d = c >= '0' && c <= '9'   ? c - '0'
                                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                         : -1;
        if (d < 0)
            return -1;
        v = v << 4 | d;
    }
    return v;
}

static void keep_utf8(struct jscan *j, unsigned cp)
{
    if (cp < 0x80) {
        keep(j, (unsigned char)cp);
    } else if (cp < 0x800) {
        keep(j, (unsigned char)(0xc0 | cp >> 6));
        keep(j, (unsigned char)(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
        keep(j, (unsigned char)(0xe0 | cp >> 12));
        keep(j, (unsigned char)(0x80 | (cp >> 6 & 0x3f)));
        keep(j, (unsigned char)(0x80 | (cp & 0x3f)));
    } else {
        keep(j, (unsigned char)(0xf0 | cp >> 18));
        keep(j, (unsigned char)(0x80 | (cp >> 12 & 0x3f)));
        keep(j, (unsigned char)(0x80 | (cp >> 6 & 0x3f)));
        keep(j, (unsigned char)(0x80 | (cp & 0x3f)));
    }
}

static int escape(struct jscan *j)
{
    int c = next_byte(j);
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *e = c > 0 ? strchr(from, c) : NULL;
    if (e && *e) {
        keep(j, (unsigned char)to[e - from]);
        return 0;
    }
    if (c != 'u')
        return fail(j, "an invalid escape in a string");
    int cp = hex4(j);
    if (cp < 0)
        return fail(j, "\\u is not followed by four hex digits");
    if (cp >= 0xdc00 && cp <= 0xdfff)
        return fail(j, "a lone low surrogate in a string");
    if (cp >= 0xd800 && cp <= 0xdbff) {
        int lo = next_byte(j) == '\\' && next_byte(j) == 'u' ? hex4(j) : -1;
        if (lo < 0xdc00 || lo > 0xdfff)
            return fail(j, "a high surrogate without its low half");
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    if (cp == 0)
        return fail(j, "\\u0000 in a string");
    keep_utf8(j, (unsigned)cp);
    return 0;
}

/* One UTF-8 sequence after its lead byte c, checked as RFC 3629 says. */
static int utf8(struct jscan *j, int c)
{
    int more, lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf)
        more = 1;
    else if (c >= 0xe0 && c <= 0xef)
        more = 2, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    else if (c >= 0xf0 && c <= 0xf4)
        more = 3, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    else
        return fail(j, "invalid UTF-8 in a string");
    keep(j, (unsigned char)c);
    for (int i = 0; i < more; i++) {
        int b = next_byte(j);
        if (b < lo || b > hi)
            return fail(j, "invalid UTF-8 in a string");
        keep(j, (unsigned char)b);
        lo = 0x80, hi = 0xbf;
    }
    return 0;
}

/* A run of plain ASCII (no quote, backslash or control character), taken
 * at once: most of a long string. */
static void plain_run(struct jscan *j)
{
    const unsigned char *p;
    size_t n;
    while ((n = reader_window(j->r, &p)) > 0) {
        size_t k = 0;
        while (k < n && p[k] >= 0x20 && p[k] < 0x80 && p[k] != '"' && p[k] != '\\')
            k++;
        if (j->len < sizeof j->str - 1) {
            size_t room = sizeof j->str - 1 - j->len, take = k < room ? k : room;
            memcpy(j->str + j->len, p, take);
        }
        if (j->len + k > sizeof j->str - 1)
            j->cut = true;
        j->len += k;
        j->r->pos += k;
        if (k < n)
            return;
    }
}

static int string(struct jscan *j)
{
    j->len = 0;
    j->cut = false;
    for (;;) {
        plain_run(j);
        int c = next_byte(j);
        if (c == '"')
            break;
        if (c < 0)
            return fail(j, "the document ends inside a string");
        if (c < 0x20)
            return fail(j, "a control character in a string");
        if ((c == '\\' && escape(j) < 0) || (c >= 0x80 && utf8(j, c) < 0))
            return -1;
        if (c != '\\' && c < 0x80)
            keep(j, (unsigned char)c);
    }
    j->str[j->len < sizeof j->str ? j->len : sizeof j->str - 1] = '\0';
    return 0;
}

/* A number wholly in the window, as most are: its digits read in place.
 * false when it is not plain (fraction, exponent, too long) or runs past
 * the window: the careful path reads it then. */
static bool quick_number(struct jscan *j, int c)
{
    const unsigned char *p;
    size_t n = reader_window(j->r, &p), k = 0;
    bool neg = c == '-';
    uint64_t v = neg ? 0 : (uint64_t)(c - '0');
    if (neg && (!n || p[0] < '0' || p[0] > '9'))
        return false;
    if (c == '0' || (neg && p[0] == '0')) { /* a lone zero */
        k = neg;
        if (k < n && p[k] >= '0' && p[k] <= '9')
            return false;
        v = 0;
    } else {
        while (k < n && k < 17 && p[k] >= '0' && p[k] <= '9')
            v = v * 10 + (uint64_t)(p[k++] - '0');
    }
    if (k == n || (p[k] >= '0' && p[k] <= '9') || p[k] == '.' || p[k] == 'e' || p[k] == 'E')
        return false;
    j->r->pos += k;
    j->whole = true;
    j->num = neg ? -(int64_t)v : (int64_t)v;
    j->state = ST_AFTER;
    return true;
}

static enum jscan_tok number(struct jscan *j, int c)
{
    uint64_t at = j->r->pos;
    if (quick_number(j, c))
        return JSCAN_NUM;
    j->r->pos = at;
    bool neg = c == '-';
    uint64_t v = 0;
    j->whole = true;
    if (neg)
        c = next_byte(j);
    if (c < '0' || c > '9')
        return fail(j, "a number without digits");
    if (c == '0' && peek(j) >= '0' && peek(j) <= '9')
        return fail(j, "a number with a leading zero");
    for (;;) {
        if (v > (UINT64_MAX - 9) / 10)
            j->whole = false;
        v = v * 10 + (uint64_t)(c - '0');
        int n = peek(j);
        if (n < '0' || n > '9')
            break;
        c = next_byte(j);
    }
    if (peek(j) == '.') {
        next_byte(j);
        j->whole = false;
        if (peek(j) < '0' || peek(j) > '9')
            return fail(j, "a number with no digits after its point");
        while (peek(j) >= '0' && peek(j) <= '9')
            next_byte(j);
    }
    if (peek(j) == 'e' || peek(j) == 'E') {
        next_byte(j);
        j->whole = false;
        if (peek(j) == '+' || peek(j) == '-')
            next_byte(j);
        if (peek(j) < '0' || peek(j) > '9')
            return fail(j, "a number with no digits in its exponent");
        while (peek(j) >= '0' && peek(j) <= '9')
            next_byte(j);
    }
    if (v > (uint64_t)INT64_MAX)
        j->whole = false;
    j->num = j->whole ? (neg ? -(int64_t)v : (int64_t)v) : 0;
    j->state = ST_AFTER;
    return JSCAN_NUM;
}

static enum jscan_tok word(struct jscan *j, const char *rest, enum jscan_tok tok)
{
    for (; *rest; rest++)
        if (next_byte(j) != *rest)
            return fail(j, "not a JSON value");
    j->state = ST_AFTER;
    return tok;
}

static enum jscan_tok push(struct jscan *j, char bracket)
{
    if (j->depth == JSCAN_DEPTH)
        return fail(j, "nested deeper than 64 levels");
    j->in[j->depth++] = bracket;
    j->state = bracket == '{' ? ST_KEY_OR_END : ST_VALUE_OR_END;
    return bracket == '{' ? JSCAN_OBJ : JSCAN_ARR;
}

static enum jscan_tok pop(struct jscan *j, char bracket)
{
    if (!j->depth || j->in[j->depth - 1] != bracket)
        return fail(j, bracket == '{' ? "a '}' that closes nothing" : "a ']' that closes nothing");
    j->depth--;
    j->state = j->depth ? ST_AFTER : ST_DONE;
    return bracket == '{' ? JSCAN_OBJ_END : JSCAN_ARR_END;
}

static enum jscan_tok value(struct jscan *j, int c)
{
    switch (c) {
    case '{':
    case '[':
        return push(j, (char)c);
    case '"':
        if (string(j) < 0)
            return JSCAN_ERR;
        j->state = ST_AFTER;
        return JSCAN_STRING;
    case 't':
        return word(j, "rue", JSCAN_TRUE);
    case 'f':
        return word(j, "alse", JSCAN_FALSE);
    case 'n':
        return word(j, "ull", JSCAN_NULL);
    case -1:
        return fail(j, "the document ends where a value should be");
    default:
        if (c == '-' || (c >= '0' && c <= '9'))
            return number(j, c);
        return fail(j, "not a JSON value");
    }
}

enum jscan_tok jscan_next(struct jscan *j)
{
    for (;;) {
        const unsigned char *p;
        size_t n;
        while ((n = reader_window(j->r, &p)) > 0) { /* spaces, a window at a time */
            size_t k = 0;
            while (k < n && (p[k] == ' ' || p[k] == '\t' || p[k] == '\n' || p[k] == '\r'))
                k++;
            j->r->pos += k;
            if (k < n)
                break;
        }
        int c = next_byte(j);
        if (j->state == ST_AFTER && !j->depth)
            j->state = ST_DONE;
        switch (j->state) {
        case ST_DONE:
            if (c < 0 && !j->err[0])
                return JSCAN_EOF;
            return j->err[0] ? JSCAN_ERR : fail(j, "more after the end of the document");
        case ST_AFTER:
            if (c == ',') {
                j->state = j->in[j->depth - 1] == '{' ? ST_KEY : ST_VALUE;
                continue;
            }
            if (c == '}' || c == ']')
                return pop(j, c == '}' ? '{' : '[');
            return fail(j, c < 0 ? "the document ends early" : "expected ',' or a closing bracket");
        case ST_COLON:
            if (c != ':')
                return fail(j, "expected ':' after a member's name");
            j->state = ST_VALUE;
            continue;
        case ST_KEY_OR_END:
            if (c == '}')
                return pop(j, '{');
            /* fall through */
        case ST_KEY:
            if (c != '"')
                return fail(j, c < 0 ? "the document ends early" : "expected a member's name");
            if (string(j) < 0)
                return JSCAN_ERR;
            j->state = ST_COLON;
            return JSCAN_KEY;
        case ST_VALUE_OR_END:
            if (c == ']')
                return pop(j, '[');
            /* fall through */
        default:
            return value(j, c);
        }
    }
}

/* What is left of an open object or array, by its brackets and strings
 * alone: nothing in it is read. Its closing token, or an error. */
static enum jscan_tok skip_rest(struct jscan *j)
{
    unsigned depth = 1;
    bool in_str = false, esc = false;
    const unsigned char *p;
    size_t n;
    while ((n = reader_window(j->r, &p)) > 0) {
        for (size_t k = 0; k < n; k++) {
            unsigned char c = p[k];
            if (in_str) {
                if (esc)
                    esc = false;
                else if (c == '\\')
                    esc = true;
                else if (c == '"')
                    in_str = false;
                else if (c < 0x20)
                    return j->r->pos += k, fail(j, "a control character in a string");
                continue;
            }
            if (c == '"') {
                in_str = true;
            } else if (c == '{' || c == '[') {
                if (++depth > JSCAN_DEPTH)
                    return j->r->pos += k, fail(j, "nested deeper than 64 levels");
            } else if (c == '}' || c == ']') {
                if (--depth == 0) {
                    j->r->pos += k + 1;
                    return pop(j, c == '}' ? '{' : '[');
                }
            }
        }
        j->r->pos += n;
    }
    return fail(j, "the document ends inside a value");
}

enum jscan_tok jscan_finish(struct jscan *j, enum jscan_tok t)
{
    if (t != JSCAN_OBJ && t != JSCAN_ARR)
        return t;
    /* the bracket the value opened is on the stack: skip_rest pops it */
    return skip_rest(j) == JSCAN_ERR ? JSCAN_ERR : t;
}

enum jscan_tok jscan_skip(struct jscan *j)
{
    enum jscan_tok t = jscan_next(j);
    if (t == JSCAN_EOF || t == JSCAN_OBJ_END || t == JSCAN_ARR_END || t == JSCAN_KEY)
        return fail(j, "expected a value");
    return jscan_finish(j, t);
}

bool jscan_is(const struct jscan *j, const char *s)
{
    return !j->cut && !strcmp(j->str, s);
}
