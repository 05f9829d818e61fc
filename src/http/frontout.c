/* frontout: the front's answers to its clients: status lines, headers,
 * bodies whole or in parts with chunk framing, and the pace of a client
 * that reads slower than its backend writes (http/front.h's front_reply*,
 * front_error, front_abort). The connection is front.c's (frontout.h). */
#include "http/frontout.h"

#include <errno.h>
#include <event2/buffer.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "http/status.h"
#include "http/wbuf.h"

/* An answer's bytes waiting for a client that reads slower than its
 * backend writes: past HIGH its backend is not read (the proxy holds
 * about this much per connection, not the whole answer), under LOW it is
 * again. */
#define FRONT_HIGH (1u << 20)
#define FRONT_LOW  (256u << 10)

static void unthrottle(struct conn *c)
{
    if (c->throttled && evbuffer_get_length(c->out) <= FRONT_LOW) {
        c->throttled = false;
        if (c->busy && c->req.arg && c->req.ops->drained)
            c->req.ops->drained(c->req.ops_arg, &c->req, c->req.arg);
    }
}

bool front_backlogged(struct front_req *r)
{
    struct conn *c = r->c;
    if (c->dead || evbuffer_get_length(c->out) <= FRONT_HIGH)
        return false;
    c->throttled = true;
    return true;
}

void frontout_flush(struct conn *c)
{
    bool wrote = false;
    while (!c->dead && evbuffer_get_length(c->out)) {
        int n = evbuffer_write(c->out, c->fd);
        if (n > 0) {
            wrote = true;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            event_add(c->wr, NULL);
            /* an answer its client does not read: how long from the last progress */
            if ((c->busy || c->closing) && (wrote || !c->stalled))
                frontout_arm(c, &c->f->timeout);
            c->stalled = true;
            unthrottle(c);
            return;
        }
        c->dead = true;
        return;
    }
    if (c->dead)
        return;
    unthrottle(c);
    if (c->stalled) {
        c->stalled = false;
        if (c->busy)
            evtimer_del(c->timer);
    }
    if (c->closing && c->peer_eof) {
        c->dead = true; /* all said, and the client has nothing more to say */
    } else if (c->closing && !c->shut) {
        shutdown(c->fd, SHUT_WR); /* the reader sees the end; we drain its rest */
        c->shut = true;
        struct timeval tv = {LINGER_S, 0};
        if (c->f->timeout.tv_sec < LINGER_S)
            tv = c->f->timeout;
        frontout_arm(c, &tv);
    }
}

void frontout_on_write(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct conn *c = arg;
    c->guard++;
    frontout_flush(c);
    if (--c->guard == 0 && c->dead)
        front_conn_free(c);
}

/* The status line and headers, left in w for the caller's last lines. */
static void head_out(struct wbuf *w, struct front_req *r, int status, const char *const *names,
                     const char *const *values, size_t n)
{
    wbuf_init(w, r->c->out);
    wbuf_add(w, "HTTP/1.1 ", 9);
    wbuf_num(w, (unsigned)status, 10);
    wbuf_add(w, " ", 1);
    wbuf_str(w, status_reason(status));
    wbuf_add(w, "\r\n", 2);
    for (size_t i = 0; i < n; i++)
        wbuf_header(w, names[i], values[i]);
    wbuf_add(w, r->extra, r->extra_len);
    if (!r->keep_alive)
        wbuf_str(w, "Connection: close\r\n");
    else if (!r->http11) /* an HTTP/1.0 client closes unless told otherwise */
        wbuf_str(w, "Connection: keep-alive\r\n");
}

/* The request is answered: the next one on the connection may be read. */
static void done(struct front_req *r)
{
    struct conn *c = r->c;
    r->replying = false;
    r->extra_len = 0;
    c->busy = false;
    if (!r->keep_alive)
        c->closing = true;
    c->stalled = false; /* from here the timer is the idle one, or the close's */
    frontout_flush(c);
    if (!c->closing && !c->dead) {
        hdrs_reset(&r->h);
        frontout_arm(c, &c->f->timeout); /* how long it may stay idle */
        front_parse_more(c);             /* a pipelined request may be waiting */
    }
}

/* 1xx, 204 and 304 answers have no body, nor has any answer to HEAD. */
static bool bodiless(const struct front_req *r, int status)
{
    return r->method == EVHTTP_REQ_HEAD || status / 100 == 1 || status == 204 || status == 304;
}

void front_reply(struct front_req *r, int status, const char *const *names,
                 const char *const *values, size_t n, const char *body, size_t len)
{
    struct conn *c = r->c;
    struct wbuf w;
    head_out(&w, r, status, names, values, n);
    if (status != 204 && status != 304) {
        wbuf_str(&w, "Content-Length: ");
        wbuf_num(&w, len, 10);
        wbuf_add(&w, "\r\n", 2);
    }
    wbuf_add(&w, "\r\n", 2);
    wbuf_flush(&w);
    if (!bodiless(r, status))
        evbuffer_add(c->out, body, len);
    c->guard++;
    done(r);
    c->guard--;
    frontout_settle(c);
}

void front_error(struct front_req *r, enum errbody_kind kind, const char *msg, int retry_after)
{
    char body[1024], ra[24];
    const struct front *f = r->c->f;
    enum errbody_dialect d =
        f->ops->dialect ? f->ops->dialect(f->arg, front_uri(r)) : ERRBODY_PLAIN;
    size_t len = errbody_render(d, kind, msg, body, sizeof body);
    snprintf(ra, sizeof ra, "%d", retry_after);
    const char *names[3] = {"Content-Type"}, *values[3] = {"application/json"};
    size_t n = 1;
    if (retry_after > 0) {
        names[n] = "Retry-After";
        values[n++] = ra;
    }
    if (kind == ERRBODY_UNAUTHORIZED) { /* RFC 9110 11.6.1: every 401 says what it wants */
        names[n] = "WWW-Authenticate";
        values[n++] = "Bearer realm=\"vram\"";
    }
    front_reply(r, errbody_status(kind), names, values, n, body, len);
}

bool front_add_header(struct front_req *r, const char *name, const char *value)
{
    size_t nl = strlen(name), vl = strlen(value);
    if (strpbrk(name, "\r\n:") || strpbrk(value, "\r\n") ||
        r->extra_len + nl + vl + 4 > sizeof r->extra)
        return false;
    memcpy(r->extra + r->extra_len, name, nl);
    memcpy(r->extra + r->extra_len + nl, ": ", 2);
    memcpy(r->extra + r->extra_len + nl + 2, value, vl);
    memcpy(r->extra + r->extra_len + nl + 2 + vl, "\r\n", 2);
    r->extra_len += nl + vl + 4;
    return true;
}

void front_reply_start(struct front_req *r, int status, const char *const *names,
                       const char *const *values, size_t n, bool has_length)
{
    r->nobody = bodiless(r, status);
    /* chunked to HTTP/1.1 clients, so that a cut answer shows as one; an
     * HTTP/1.0 client knows only the end of the connection */
    r->chunked = !has_length && !r->nobody && r->http11;
    if (!has_length && !r->nobody && !r->http11)
        r->keep_alive = false;
    struct wbuf w;
    head_out(&w, r, status, names, values, n);
    if (r->chunked)
        wbuf_str(&w, "Transfer-Encoding: chunked\r\n");
    wbuf_add(&w, "\r\n", 2);
    wbuf_flush(&w);
    r->replying = true;
    /* not written yet: it goes with the first part, in one packet */
}

void front_reply_part(struct front_req *r, const char *data, size_t len)
{
    if (!len || r->nobody)
        return;
    struct conn *c = r->c;
    if (r->chunked) {
        struct wbuf w;
        wbuf_init(&w, c->out);
        wbuf_num(&w, len, 16);
        wbuf_add(&w, "\r\n", 2);
        wbuf_flush(&w);
    }
    evbuffer_add(c->out, data, len);
    if (r->chunked)
        evbuffer_add(c->out, "\r\n", 2);
    c->guard++;
    frontout_flush(c);
    c->guard--;
    frontout_settle(c);
}

void front_reply_buffer(struct front_req *r, struct evbuffer *b)
{
    size_t n = evbuffer_get_length(b);
    front_reply_part(r, (const char *)evbuffer_pullup(b, -1), n);
    evbuffer_drain(b, n);
}

void front_reply_events(struct front_req *r)
{
    static const char *const names[] = {"Content-Type", "Cache-Control"};
    static const char *const values[] = {"text/event-stream", "no-cache"};
    front_reply_start(r, 200, names, values, 2, false);
}

void front_reply_end(struct front_req *r)
{
    struct conn *c = r->c;
    if (r->chunked)
        evbuffer_add(c->out, "0\r\n\r\n", 5);
    c->guard++;
    done(r);
    c->guard--;
    frontout_settle(c);
}

void front_abort(struct front_req *r)
{
    struct conn *c = r->c;
    c->busy = false;
    c->dead = true;
    r->arg = NULL;
    if (!c->guard)
        front_conn_free(c);
}
