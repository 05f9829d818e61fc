/* relay: plain sockets toward the models, for the proxy's speed.
 *
 * libevent 2.1's HTTP client takes a loop turn to write a request and
 * re-registers its socket at every step (6 epoll_ctl and 4 epoll_wait per
 * proxied request, measured). Here a connection's socket is registered for
 * reading once, for as long as it lives; a request is written in the
 * handler that received it; only a write that would block waits for the
 * socket. Answers are parsed by http-parser (Node's, from Debian), so vram
 * parses no HTTP itself. */
#include "http/relay.h"

#include "http/hdrs.h"
#include "http/wbuf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <http_parser.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

struct relay_conn {
    evutil_socket_t fd;
    struct event *rd, *wr;
    struct evbuffer *out;
    http_parser parser;
    bool busy, broken, head;
    bool paused;   /* its client takes the answer slower than it comes: not read for now */
    bool interim;  /* a 1xx answer is being read: skipped, the real one follows */
    bool trailers; /* past the answer's headers: a chunked body's trailer, dropped */
    const struct relay_ops *ops;
    void *arg;
    struct hdrs h; /* of the answer being read */
    /* callbacks may close the connection from inside its own handlers:
     * then it is freed when they return */
    int guard;
    bool closing;
    /* the answer is whole: told to the proxy once the parser has returned,
     * as the proxy may reuse the connection (and its parser) at once */
    bool complete;
};

static void destroy(struct relay_conn *c);

/* Hop-by-hop headers (RFC 9110 7.6.1), and Expect: the proxy answers
 * 100-continue itself, and a backend's own 100 is no answer to pass on.
 * Host and Content-Length are the relay's to write. */
static const char *const hop[] = {"Connection",        "Keep-Alive", "TE",     "Trailer",
                                  "Transfer-Encoding", "Upgrade",    "Expect", "Host",
                                  "Content-Length"};

/* Asked for every header both ways: compare only names of the same
 * length (most headers then cost one strlen and no strcasecmp). */
bool relay_hop_by_hop(const char *name)
{
    static size_t hop_len[sizeof hop / sizeof hop[0]];
    if (!hop_len[0])
        for (size_t i = 0; i < sizeof hop / sizeof hop[0]; i++)
            hop_len[i] = strlen(hop[i]);
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof hop / sizeof hop[0]; i++)
        if (n == hop_len[i] && !strcasecmp(name, hop[i]))
            return true;
    return n > 6 && !strncasecmp(name, "Proxy-", 6); /* Proxy-Authorization, -Connection... */
}

/* Whether name is one of the comma-separated tokens of list. */
static bool listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        size_t k = strcspn(p, ", \t");
        if (k == n && !strncasecmp(p, name, n))
            return true;
        p += k;
    }
    return false;
}

/* The Connection header's value when it names headers of its own (more
 * than close, keep-alive, upgrade), which are hop-by-hop too; else NULL. */
static const char *connection_names(const char *const *names, const char *const *values, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strlen(names[i]) != 10 || strcasecmp(names[i], "Connection"))
            continue;
        for (const char *p = values[i]; *p;) {
            while (*p == ' ' || *p == '\t' || *p == ',')
                p++;
            size_t k = strcspn(p, ", \t");
            if (k && !(k == 5 && !strncasecmp(p, "close", 5)) &&
                !(k == 10 && !strncasecmp(p, "keep-alive", 10)) &&
                !(k == 7 && !strncasecmp(p, "upgrade", 7)))
                return values[i];
            p += k;
        }
    }
    return NULL;
}

size_t relay_end_to_end(const char *const *names, const char *const *values, size_t n,
                        const char **kn, const char **kv, size_t max, bool *has_length)
{
    const char *extra = connection_names(names, values, n);
    size_t k = 0;
    *has_length = false;
    for (size_t i = 0; i < n && k < max; i++) {
        bool length = strlen(names[i]) == 14 && !strcasecmp(names[i], "Content-Length");
        if ((relay_hop_by_hop(names[i]) && !length) || (extra && listed(extra, names[i])) ||
            !strncasecmp(names[i], "Access-Control-", 15))
            continue;
        *has_length |= length;
        kn[k] = names[i];
        kv[k++] = values[i];
    }
    return k;
}

/* ---- parsing the answer ---- */

static int on_field(http_parser *p, const char *at, size_t len)
{
    struct relay_conn *c = p->data;
    return c->trailers ? 0 : hdrs_field(&c->h, at, len);
}

static int on_value(http_parser *p, const char *at, size_t len)
{
    struct relay_conn *c = p->data;
    return c->trailers ? 0 : hdrs_value(&c->h, at, len);
}

static int on_headers_complete(http_parser *p)
{
    struct relay_conn *c = p->data;
    if (hdrs_end(&c->h) < 0)
        return -1;
    if (p->status_code / 100 == 1) {
        if (p->status_code == 101) /* a switch of protocols nobody asked for (Upgrade is dropped) */
            return -1;
        c->interim = true; /* 100 Continue, 103 Early Hints: never the answer */
        return 0;
    }
    c->trailers = true;
    c->ops->headers(c->arg, (int)p->status_code, c->h.names, c->h.values, c->h.n);
    return c->head ? 1 : 0; /* a HEAD answer has no body, whatever it says */
}

static int on_body(http_parser *p, const char *at, size_t len)
{
    struct relay_conn *c = p->data;
    c->ops->body(c->arg, at, len);
    return 0;
}

static int on_complete(http_parser *p)
{
    struct relay_conn *c = p->data;
    if (c->interim) { /* the parser goes on to the answer itself */
        c->interim = false;
        hdrs_reset(&c->h);
        return 0;
    }
    c->complete = true;
    c->broken = c->broken || !http_should_keep_alive(p);
    http_parser_pause(p, 1);
    return 0;
}

/* After the parser returned: a whole answer is handed over. */
static bool deliver(struct relay_conn *c, size_t used, size_t n)
{
    if (!c->complete)
        return false;
    c->complete = false;
    c->busy = false;
    relay_pause(c, false); /* the next answer is read as it comes */
    if (used != n)         /* bytes after the answer: not ours to keep */
        c->broken = true;
    c->ops->done(c->arg);
    return true;
}

static const http_parser_settings settings = {
    .on_header_field = on_field,
    .on_header_value = on_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_complete,
};

/* ---- the socket ---- */

static void fail(struct relay_conn *c, const char *why)
{
    c->broken = true;
    if (c->busy) {
        c->busy = false;
        c->ops->error(c->arg, why);
    }
}

/* closed: the edge also said the backend closed (EV_CLOSED). Its last
 * bytes and its close often come as one edge: a short read does not drain
 * the socket then, and the close, which ends an answer delimited by it or
 * cuts one short, would never be seen. */
static void read_all(struct relay_conn *c, bool closed)
{
    char buf[65536];
    if (closed)
        c->broken = true; /* whatever it answers now, it takes no more requests */
    for (;;) {
        ssize_t n = recv(c->fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            event_del(c->rd);
            c->broken = true;
            if (c->busy) /* the end of an answer delimited by the close */
                http_parser_execute(&c->parser, &settings, buf, 0);
            if (!deliver(c, 0, 0))
                fail(c, n == 0 ? "connection closed" : strerror(errno));
            return;
        }
        if (!c->busy) { /* bytes nobody asked for: a broken backend */
            event_del(c->rd);
            c->broken = true;
            return;
        }
        size_t used = http_parser_execute(&c->parser, &settings, buf, (size_t)n);
        if ((size_t)n == sizeof buf && c->complete)
            c->broken = true; /* more may wait past the answer, and no edge will say so */
        if (c->closing || deliver(c, used, (size_t)n))
            return;
        if (c->parser.http_errno != HPE_OK || used != (size_t)n) {
            event_del(c->rd);
            char why[96];
            snprintf(why, sizeof why, "bad answer (%s)",
                     http_errno_name((enum http_errno)c->parser.http_errno));
            fail(c, why);
            return;
        }
        if (c->paused)
            return; /* the rest waits in the socket, the backend held back by TCP */
        if ((size_t)n < sizeof buf && !closed)
            return; /* drained; what comes later is a new edge (the socket is edge-triggered) */
    }
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    struct relay_conn *c = arg;
    c->guard++;
    read_all(c, what & EV_CLOSED);
    if (--c->guard == 0 && c->closing)
        destroy(c);
}

static void flush(struct relay_conn *c)
{
    while (!c->closing && evbuffer_get_length(c->out)) {
        int n = evbuffer_write(c->out, c->fd);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINPROGRESS)) {
            event_add(c->wr, NULL); /* the rest when the socket takes it */
            return;
        }
        if (n <= 0) {
            fail(c, n == 0 ? "connection closed" : strerror(errno));
            return;
        }
    }
}

static void on_write(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct relay_conn *c = arg;
    c->guard++;
    flush(c);
    if (--c->guard == 0 && c->closing)
        destroy(c);
}

/* A connection to addr, registered with the loop; NULL on failure. */
static struct relay_conn *conn_new(struct event_base *base, int family, const struct sockaddr *addr,
                                   socklen_t alen)
{
    struct relay_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (c->fd >= 0 && family == AF_INET)
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (c->fd < 0 || (connect(c->fd, addr, alen) < 0 && errno != EINPROGRESS) ||
        !(c->out = evbuffer_new()) ||
        !(c->rd = event_new(base, c->fd, EV_READ | EV_CLOSED | EV_PERSIST | EV_ET, on_read, c)) ||
        !(c->wr = event_new(base, c->fd, EV_WRITE, on_write, c)) || event_add(c->rd, NULL) < 0) {
        relay_close(c);
        return NULL;
    }
    return c;
}

/* An unbroken connection from the pool, or NULL. */
static struct relay_conn *pooled(struct relay_conn **pool, unsigned *npool)
{
    while (*npool) {
        struct relay_conn *c = pool[--*npool];
        if (!c->broken)
            return c;
        relay_close(c);
    }
    return NULL;
}

struct relay_conn *relay_get(struct event_base *base, struct relay_conn **pool, unsigned *npool,
                             unsigned port)
{
    struct relay_conn *c = pooled(pool, npool);
    if (c)
        return c;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return conn_new(base, AF_INET, (const struct sockaddr *)&a, sizeof a);
}

int relay_send(struct relay_conn *c, enum evhttp_cmd_type method, const char *uri,
               const char *const *names, const char *const *values, size_t nheaders,
               struct evbuffer *body, const struct relay_ops *ops, void *arg)
{
    static const struct {
        enum evhttp_cmd_type m;
        const char *name;
    } methods[] = {{EVHTTP_REQ_GET, "GET"},       {EVHTTP_REQ_POST, "POST"},
                   {EVHTTP_REQ_HEAD, "HEAD"},     {EVHTTP_REQ_PUT, "PUT"},
                   {EVHTTP_REQ_DELETE, "DELETE"}, {EVHTTP_REQ_OPTIONS, "OPTIONS"},
                   {EVHTTP_REQ_PATCH, "PATCH"}};
    const char *name = NULL;
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        if (methods[i].m == method)
            name = methods[i].name;
    if (c->broken || !name)
        return -1;
    c->ops = ops;
    c->arg = arg;
    c->busy = true;
    c->head = method == EVHTTP_REQ_HEAD;
    hdrs_reset(&c->h);
    c->complete = c->interim = c->trailers = false;
    http_parser_init(&c->parser, HTTP_RESPONSE);
    c->parser.data = c;
    struct wbuf w;
    wbuf_init(&w, c->out);
    wbuf_str(&w, name);
    wbuf_add(&w, " ", 1);
    wbuf_str(&w, uri);
    wbuf_str(&w, " HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    const char *extra = connection_names(names, values, nheaders);
    for (size_t i = 0; i < nheaders; i++)
        if (!relay_hop_by_hop(names[i]) && !(extra && listed(extra, names[i])))
            wbuf_header(&w, names[i], values[i]);
    wbuf_str(&w, "Content-Length: ");
    wbuf_num(&w, evbuffer_get_length(body), 10);
    wbuf_add(&w, "\r\n\r\n", 4);
    wbuf_flush(&w);
    evbuffer_add_buffer(c->out, body);
    c->guard++;
    flush(c);
    if (--c->guard == 0 && c->closing)
        destroy(c);
    return 0;
}

void relay_pause(struct relay_conn *c, bool pause)
{
    if (c->closing || c->paused == pause)
        return;
    c->paused = pause;
    if (pause) {
        event_del(c->rd);
    } else {
        event_add(c->rd, NULL);
        event_active(c->rd, EV_READ, 1); /* what came meanwhile gave its edge already */
    }
}

void relay_put(struct relay_conn *c, struct relay_conn **pool, unsigned *npool, unsigned max)
{
    if (c->broken || c->busy || *npool >= max)
        relay_close(c);
    else
        pool[(*npool)++] = c;
}

void relay_close(struct relay_conn *c)
{
    if (!c)
        return;
    if (c->guard) { /* inside its own handler: freed on the way out */
        c->closing = true;
        c->busy = false;
        if (c->rd)
            event_del(c->rd);
        if (c->wr)
            event_del(c->wr);
        return;
    }
    destroy(c);
}

static void destroy(struct relay_conn *c)
{
    if (c->rd)
        event_free(c->rd);
    if (c->wr)
        event_free(c->wr);
    if (c->out)
        evbuffer_free(c->out);
    if (c->fd >= 0)
        close(c->fd);
    free(c);
}
