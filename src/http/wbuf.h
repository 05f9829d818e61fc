/* wbuf: text the proxy writes at every request (message heads, chunk
 * sizes, the log line), built in a buffer on the stack without printf:
 * printf's format parsing was the largest user-space cost of a proxied
 * request in profiles. Text past the buffer goes to an evbuffer when one
 * is given (a head may be as long as the headers it carries), else it is
 * cut (a log line). */
#ifndef VRAM_DAEMON_WBUF_H
#define VRAM_DAEMON_WBUF_H

#include <event2/buffer.h>
#include <stddef.h>
#include <string.h>

struct wbuf {
    struct evbuffer *out; /* NULL: text past the buffer is cut */
    size_t len;
    char b[4096];
};

void wbuf_init(struct wbuf *w, struct evbuffer *out);
void wbuf_add(struct wbuf *w, const char *s, size_t n);
void wbuf_str(struct wbuf *w, const char *s);
/* An unsigned number, in decimal or hexadecimal (base 10 or 16). */
void wbuf_num(struct wbuf *w, unsigned long long v, unsigned base);
/* "name: value\r\n" */
void wbuf_header(struct wbuf *w, const char *name, const char *value);
/* What is left in the buffer goes to out (nothing to do without one). */
void wbuf_flush(struct wbuf *w);

/* At most n bytes of src into dst of size bytes, cut to fit, terminated:
 * snprintf("%.*s")'s job, without its format parsing. */
static inline void wbuf_copy(char *dst, size_t size, const char *src, size_t n)
{
    if (!size)
        return;
    if (n > size - 1)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

#endif
