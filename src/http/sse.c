/* sse: the framing of streamed answers, by the rules of the HTML standard's
 * event-stream parser: lines end in LF, CR LF or CR (a CR LF split across
 * two reads is one end), "data:" lines are joined with LF, a leading space
 * after the colon is dropped, comments (":...") and other fields (event:,
 * id:, retry:) are skipped, a blank line ends the event. NDJSON is the
 * same without fields: each non-blank line is an event. */
#include "http/sse.h"

#include <stdlib.h>
#include <string.h>

void sse_init(struct sse *s, bool ndjson)
{
    memset(s, 0, sizeof *s);
    s->ndjson = ndjson;
}

void sse_free(struct sse *s)
{
    free(s->line);
    s->line = NULL;
    s->len = s->cap = s->data = 0;
}

static int grow(struct sse *s, size_t more)
{
    if (s->len + more + 1 > SSE_MAX_EVENT + 2) {
        s->overflow = true;
        return -1;
    }
    if (s->len + more + 1 <= s->cap)
        return 0;
    size_t cap = s->cap ? s->cap : 256;
    while (cap < s->len + more + 1)
        cap *= 2;
    char *l = realloc(s->line, cap);
    if (!l) {
        s->overflow = true;
        return -1;
    }
    s->line = l;
    s->cap = cap;
    return 0;
}

/* The line after s->data is whole: keep its data, or end the event. */
static void line_done(struct sse *s, void (*event)(void *, const char *, size_t), void *arg)
{
    char *l = s->line + s->data;
    size_t n = s->len - s->data;
    if (s->ndjson) {
        size_t i = 0;
        while (i < n && (l[i] == ' ' || l[i] == '\t'))
            i++;
        if (i < n) {
            l[n] = '\0';
            event(arg, l, n);
        }
        s->len = s->data = 0;
        return;
    }
    if (n == 0) { /* a blank line: the event is whole */
        if (s->data_seen) {
            size_t d = s->data;
            if (d && s->line[d - 1] == '\n') /* the LF after the last data line */
                d--;
            s->line[d] = '\0';
            event(arg, s->line, d);
        }
        s->len = s->data = 0;
        s->data_seen = false;
        return;
    }
    if (n >= 5 && !memcmp(l, "data", 4) && l[4] == ':') {
        size_t skip = 5 + (n > 5 && l[5] == ' ');
        memmove(l, l + skip, n - skip);
        s->len = s->data + n - skip;
        s->line[s->len++] = '\n'; /* room: the line had skip >= 5 bytes more */
        s->data = s->len;
        s->data_seen = true;
    } else if (n == 4 && !memcmp(l, "data", 4)) { /* "data" alone: an empty data line */
        s->len = s->data;
        s->line[s->len++] = '\n';
        s->data = s->len;
        s->data_seen = true;
    } else { /* a comment or another field */
        s->len = s->data;
    }
}

int sse_feed(struct sse *s, const char *data, size_t len,
             void (*event)(void *arg, const char *data, size_t len), void *arg)
{
    if (s->overflow)
        return -1;
    size_t i = 0;
    if (s->skip_lf && len && data[0] == '\n')
        i = 1;
    if (len)
        s->skip_lf = false;
    while (i < len) {
        const char *p = data + i;
        size_t rest = len - i, k = 0;
        while (k < rest && p[k] != '\n' && p[k] != '\r')
            k++;
        if (grow(s, k) < 0)
            return -1;
        memcpy(s->line + s->len, p, k);
        s->len += k;
        i += k;
        if (k == rest)
            break; /* the line goes on in the next read */
        bool cr = p[k] == '\r';
        i++;
        if (cr && i < len && data[i] == '\n')
            i++;
        else if (cr && i == len)
            s->skip_lf = true;
        line_done(s, event, arg);
    }
    return 0;
}

void sse_end(struct sse *s, void (*event)(void *arg, const char *data, size_t len), void *arg)
{
    if (s->overflow)
        return;
    if (s->len > s->data)
        line_done(s, event, arg);
    if (!s->ndjson && s->data_seen)
        line_done(s, event, arg); /* the blank line it lacked */
}
