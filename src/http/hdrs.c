/* hdrs: gathering headers from http-parser's callbacks. A callback for a
 * name after a value (or after the URL) starts a new header; one for a
 * value after a name starts its value; repeated calls of the same kind
 * continue the same text. An error is an overflow (the caller answers 431
 * to a request, gives up on an answer) or a name that is no token (400). */
#include "http/hdrs.h"

#include <string.h>
#include <strings.h>

void hdrs_reset(struct hdrs *h)
{
    h->len = h->n = 0;
    h->last = HDRS_TEXT;
    h->overflow = h->badname = false;
    h->buf[0] = '\0';
}

static int add(struct hdrs *h, const char *at, size_t len)
{
    if (h->len + len + 1 >= sizeof h->buf) {
        h->overflow = true;
        return -1;
    }
    memcpy(h->buf + h->len, at, len);
    h->len += len;
    return 0;
}

static int terminate(struct hdrs *h)
{
    return add(h, "", 1);
}

int hdrs_text(struct hdrs *h, const char *at, size_t len)
{
    return add(h, at, len);
}

/* tchar: "!#$%&'*+-.^_`|~", digits, letters */
static bool token(const char *at, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)at[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              (c && strchr("!#$%&'*+-.^_`|~", c))))
            return false;
    }
    return true;
}

int hdrs_field(struct hdrs *h, const char *at, size_t len)
{
    if (!token(at, len)) {
        h->badname = true;
        return -1;
    }
    if (h->last != HDRS_FIELD) { /* a new header begins */
        if (h->n == HDRS_MAX) {
            h->overflow = true;
            return -1;
        }
        if (h->len && terminate(h) < 0)
            return -1;
        h->names[h->n] = h->buf + h->len;
        h->values[h->n++] = "";
        h->last = HDRS_FIELD;
    }
    return add(h, at, len);
}

int hdrs_value(struct hdrs *h, const char *at, size_t len)
{
    if (!h->n)
        return -1;
    if (h->last != HDRS_VALUE) {
        if (terminate(h) < 0)
            return -1;
        h->values[h->n - 1] = h->buf + h->len;
        h->last = HDRS_VALUE;
    }
    return add(h, at, len);
}

int hdrs_end(struct hdrs *h)
{
    int rc = terminate(h);
    h->last = HDRS_TEXT;
    return rc;
}

const char *hdrs_get(const struct hdrs *h, const char *name)
{
    for (size_t i = 0; i < h->n; i++)
        if (!strcasecmp(h->names[i], name))
            return h->values[i];
    return NULL;
}
