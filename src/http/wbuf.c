/* wbuf: a stack buffer filled without printf, spilling into an evbuffer. */
#include "http/wbuf.h"

#include <string.h>

void wbuf_init(struct wbuf *w, struct evbuffer *out)
{
    w->out = out;
    w->len = 0;
}

void wbuf_flush(struct wbuf *w)
{
    if (!w->out)
        return;
    evbuffer_add(w->out, w->b, w->len);
    w->len = 0;
}

void wbuf_add(struct wbuf *w, const char *s, size_t n)
{
    while (n) {
        size_t room = sizeof w->b - w->len;
        if (!room) {
            if (!w->out)
                return; /* cut */
            wbuf_flush(w);
            room = sizeof w->b;
        }
        size_t k = n < room ? n : room;
        memcpy(w->b + w->len, s, k);
        w->len += k;
        s += k;
        n -= k;
    }
}

void wbuf_str(struct wbuf *w, const char *s)
{
    wbuf_add(w, s, strlen(s));
}

void wbuf_num(struct wbuf *w, unsigned long long v, unsigned base)
{
    char d[24]; /* 2^64 has 20 decimal digits */
    size_t i = sizeof d;
    if (base != 16)
        base = 10;
    do {
        d[--i] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    wbuf_add(w, d + i, sizeof d - i);
}

void wbuf_header(struct wbuf *w, const char *name, const char *value)
{
    wbuf_str(w, name);
    wbuf_add(w, ": ", 2);
    wbuf_str(w, value);
    wbuf_add(w, "\r\n", 2);
}
