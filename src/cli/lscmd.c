/* lscmd: llama-swap's command splitting (its SanitizeCommand, and the
 * POSIX dialect of the shlex it uses), and the words quoted back for sh.
 * Only ASCII blanks separate words, as there; every other byte is a letter. */
#include "cli/lscmd.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct buf {
    char *p;
    size_t n, cap;
};

static bool put(struct buf *b, const char *s, size_t n)
{
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

/* The text llama-swap splits: comment lines out; a line that ends with
 * '\' (blanks around it aside) is that line trimmed, less the '\', and a
 * blank; the lines joined with '\n' again. */
static char *sanitized(const char *text)
{
    struct buf b = {0};
    if (!put(&b, "", 0))
        return NULL;
    bool first = true;
    for (const char *l = text;;) {
        const char *e = strchr(l, '\n');
        size_t ll = e ? (size_t)(e - l) : strlen(l), s = 0, t = ll;
        while (s < t && isspace((unsigned char)l[s]))
            s++;
        while (t > s && isspace((unsigned char)l[t - 1]))
            t--;
        if (s == t || l[s] != '#') {
            bool ok = first || put(&b, "\n", 1);
            if (t > s && l[t - 1] == '\\')
                ok = ok && put(&b, l + s, t - s - 1) && put(&b, " ", 1);
            else
                ok = ok && put(&b, l, ll);
            if (!ok) {
                free(b.p);
                return NULL;
            }
            first = false;
        }
        if (!e)
            break;
        l = e + 1;
    }
    return b.p;
}

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n';
}

static int add_word(struct lscmd *c, struct buf *w)
{
    if (c->argc == LSCMD_MAX_ARGS)
        return -1;
    char **v = realloc(c->argv, (c->argc + 2) * sizeof *v);
    if (!v)
        return -1;
    c->argv = v;
    v[c->argc] = w->p ? w->p : strdup("");
    if (!v[c->argc])
        return -1;
    v[++c->argc] = NULL;
    *w = (struct buf){0};
    return 0;
}

int lscmd_split(const char *text, struct lscmd *c)
{
    *c = (struct lscmd){0};
    char *s = sanitized(text);
    if (!s)
        return -1;
    struct buf w = {0};
    bool in_word = false;
    char quote = 0; /* '\'' or '"' while inside one */
    int rc = 0;
    for (const char *p = s; *p && rc == 0; p++) {
        char r = *p, next = p[1];
        /* a backslash: outside quotes any next byte is a letter, and a
         * newline (or nothing) after it is dropped with it; inside "..."
         * only $ ` " \ and a newline are escaped; inside '...' nothing */
        if (r == '\\' && quote != '\'') {
            if (next == '\n' || !next) {
                p += next != '\0';
                continue;
            }
            if (!quote || next == '$' || next == '`' || next == '"' || next == '\\') {
                p++;
                in_word = true;
                if (!put(&w, &next, 1))
                    rc = -1;
                continue;
            }
        }
        if (quote) {
            if (r == quote)
                quote = 0;
            else if (!put(&w, &r, 1))
                rc = -1;
        } else if (r == '"' || r == '\'') {
            quote = r;
            in_word = true;
            if (!put(&w, "", 0)) /* '' is a word, empty */
                rc = -1;
        } else if (blank(r)) {
            if (in_word)
                rc = add_word(c, &w);
            in_word = false;
        } else {
            in_word = true;
            if (!put(&w, &r, 1))
                rc = -1;
        }
    }
    if (rc == 0 && in_word) /* an unclosed quote ends with the text, as there */
        rc = add_word(c, &w);
    free(w.p);
    free(s);
    if (rc < 0)
        lscmd_free(c);
    return rc;
}

/* A byte that sh takes as it is, anywhere in a word. */
static bool plain(char ch)
{
    return isalnum((unsigned char)ch) || strchr("_@%+=:,./-", ch);
}

/* w as one sh word: as it is when every byte is plain (${PORT} and
 * ${PID} too, vram serve's to fill in), else in '...' with ' as '\'' and ;
 * as '\;' (so that no ';' follows a blank). The first word also when it
 * has '=', which sh would take for an assignment. */
static bool quote_word(struct buf *b, const char *w, bool first)
{
    bool bare = *w && !(first && strchr(w, '='));
    for (const char *p = w; bare && *p; p++) {
        if (!strncmp(p, "${PORT}", 7))
            p += 6;
        else if (!strncmp(p, "${PID}", 6))
            p += 5;
        else
            bare = plain(*p);
    }
    if (bare)
        return put(b, w, strlen(w));
    bool ok = put(b, "'", 1);
    for (const char *p = w; ok && *p; p++)
        ok = *p == '\''  ? put(b, "'\\''", 4)
             : *p == ';' ? put(b, "'\\;'", 4)
                         : put(b, p, 1);
    return ok && put(b, "'", 1);
}

char *lscmd_join(const struct lscmd *c)
{
    struct buf b = {0};
    bool ok = put(&b, "", 0);
    for (size_t i = 0; ok && i < c->argc; i++)
        ok = (!i || put(&b, " ", 1)) && quote_word(&b, c->argv[i], i == 0);
    if (!ok) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

void lscmd_free(struct lscmd *c)
{
    for (size_t i = 0; i < c->argc; i++)
        free(c->argv[i]);
    free(c->argv);
    *c = (struct lscmd){0};
}
