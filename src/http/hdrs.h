/* hdrs: the headers http-parser hands over in pieces (a name or a value
 * may come in several calls), gathered into one buffer as NUL-terminated
 * names and values. Used by both sides of the proxy (front.c, relay.c). */
#ifndef VRAM_DAEMON_HDRS_H
#define VRAM_DAEMON_HDRS_H

#include <stdbool.h>
#include <stddef.h>

#define HDRS_MAX   100
#define HDRS_BYTES (32 * 1024)

struct hdrs {
    char buf[HDRS_BYTES];
    size_t len;
    const char *names[HDRS_MAX], *values[HDRS_MAX];
    size_t n;
    enum { HDRS_TEXT, HDRS_FIELD, HDRS_VALUE } last;
    bool overflow; /* more than the buffer or HDRS_MAX headers */
    bool badname;  /* a name with a byte that is no token's (RFC 9110 5.6.2) */
};

void hdrs_reset(struct hdrs *h);
/* Text before the headers (the request's URL): at the start of buf. */
int hdrs_text(struct hdrs *h, const char *at, size_t len);
/* -1 also for a byte no header name may hold ("Content-Length : 5"):
 * http-parser as Debian builds it (not strict) takes a space there, which
 * a backend behind the proxy may read otherwise (request smuggling). */
int hdrs_field(struct hdrs *h, const char *at, size_t len);
int hdrs_value(struct hdrs *h, const char *at, size_t len);
/* The headers are complete: the last text is terminated. */
int hdrs_end(struct hdrs *h);
/* A header's value by name, case-insensitively; NULL if absent. */
const char *hdrs_get(const struct hdrs *h, const char *name);

#endif
