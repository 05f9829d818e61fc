/* front: HTTP/1.1 toward the proxy's clients, on plain sockets.
 *
 * libevent 2.1's server writes an answer one loop turn after it is given
 * and re-registers the socket around it; with relay.c on the other side
 * that was most of a proxied request's system calls. Here a connection is
 * registered for reading once; answers are written where they are made.
 * The request is parsed by http-parser; vram writes the answers' status
 * lines, headers and chunk framing, which is all the HTTP it writes. */
#include "daemon/front.h"

#include "daemon/hdrs.h"
#include "daemon/wbuf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <event2/buffer.h>
#include <event2/listener.h>
#include <http_parser.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define HEAD_TIMEOUT 30 /* seconds for a request's head to arrive */

struct front {
    struct event_base *base;
    size_t max_body;
    const struct front_ops *ops;
    void *arg;
};

struct front_req {
    struct conn *c;
    enum evhttp_cmd_type method;
    struct hdrs h; /* the URL, then the headers */
    bool keep_alive, chunked, replying;
    struct evbuffer *body;
    void *arg;
};

struct conn {
    struct front *f;
    evutil_socket_t fd;
    struct event *rd, *wr, *timer;
    struct evbuffer *in, *out;
    http_parser parser;
    struct front_req req;
    bool complete;  /* a whole request was parsed, the parser paused */
    bool busy;      /* the proxy has the request */
    bool closing;   /* close once the output is written */
    bool dead;      /* closed; freed when no handler of ours is running */
    bool too_large; /* answered 413: the rest is read and dropped */
    int guard;
};

static void conn_free(struct conn *c);
static void parse_more(struct conn *c);

/* ---- writing ---- */

static void flush_out(struct conn *c)
{
    while (!c->dead && evbuffer_get_length(c->out)) {
        int n = evbuffer_write(c->out, c->fd);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            event_add(c->wr, NULL);
            return;
        }
        if (n <= 0) {
            c->dead = true;
            return;
        }
    }
    if (c->closing && !evbuffer_get_length(c->out))
        shutdown(c->fd, SHUT_WR); /* the reader sees the end; we drain its rest */
}

static void on_write(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct conn *c = arg;
    c->guard++;
    flush_out(c);
    if (--c->guard == 0 && c->dead)
        conn_free(c);
}

static const char *reason(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 201:
        return "Created";
    case 202:
        return "Accepted";
    case 204:
        return "No Content";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 404:
        return "Not Found";
    case 408:
        return "Request Timeout";
    case 413:
        return "Payload Too Large";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Gateway Timeout";
    default:
        return "Status";
    }
}

/* The status line and headers, left in w for the caller's last lines. */
static void head_out(struct wbuf *w, struct front_req *r, int status, const char *const *names,
                     const char *const *values, size_t n)
{
    wbuf_init(w, r->c->out);
    wbuf_add(w, "HTTP/1.1 ", 9);
    wbuf_num(w, (unsigned)status, 10);
    wbuf_add(w, " ", 1);
    wbuf_str(w, reason(status));
    wbuf_add(w, "\r\n", 2);
    for (size_t i = 0; i < n; i++)
        wbuf_header(w, names[i], values[i]);
    if (!r->keep_alive)
        wbuf_str(w, "Connection: close\r\n");
}

/* The request is answered: the next one on the connection may be read. */
static void done(struct front_req *r)
{
    struct conn *c = r->c;
    r->replying = false;
    c->busy = false;
    if (!r->keep_alive)
        c->closing = true;
    flush_out(c);
    if (!c->closing && !c->dead) {
        struct timeval tv = {HEAD_TIMEOUT, 0}; /* how long it may stay idle */
        hdrs_reset(&r->h);
        evtimer_add(c->timer, &tv);
        parse_more(c); /* a pipelined request may be waiting */
    }
}

void front_reply(struct front_req *r, int status, const char *const *names,
                 const char *const *values, size_t n, const char *body, size_t len)
{
    struct wbuf w;
    head_out(&w, r, status, names, values, n);
    wbuf_str(&w, "Content-Length: ");
    wbuf_num(&w, len, 10);
    wbuf_add(&w, "\r\n\r\n", 4);
    wbuf_flush(&w);
    evbuffer_add(r->c->out, body, len);
    done(r);
}

void front_reply_start(struct front_req *r, int status, const char *const *names,
                       const char *const *values, size_t n, bool has_length)
{
    struct wbuf w;
    head_out(&w, r, status, names, values, n);
    r->chunked = !has_length && r->keep_alive;
    if (r->chunked)
        wbuf_str(&w, "Transfer-Encoding: chunked\r\n");
    else if (!has_length)
        r->c->closing = true; /* the end of the answer is the end of the connection */
    wbuf_add(&w, "\r\n", 2);
    wbuf_flush(&w);
    r->replying = true;
    /* not written yet: it goes with the first part, in one packet */
}

void front_reply_part(struct front_req *r, const char *data, size_t len)
{
    if (!len)
        return;
    if (r->chunked) {
        struct wbuf w;
        wbuf_init(&w, r->c->out);
        wbuf_num(&w, len, 16);
        wbuf_add(&w, "\r\n", 2);
        wbuf_flush(&w);
    }
    evbuffer_add(r->c->out, data, len);
    if (r->chunked)
        evbuffer_add(r->c->out, "\r\n", 2);
    flush_out(r->c);
}

void front_reply_end(struct front_req *r)
{
    if (r->chunked)
        evbuffer_add(r->c->out, "0\r\n\r\n", 5);
    done(r);
}

void front_abort(struct front_req *r)
{
    struct conn *c = r->c;
    c->busy = false;
    c->dead = true;
    if (!c->guard)
        conn_free(c);
}

/* ---- reading ---- */

static int on_begin(http_parser *p)
{
    struct conn *c = p->data;
    struct front_req *r = &c->req;
    hdrs_reset(&r->h);
    r->chunked = false;
    evbuffer_drain(r->body, evbuffer_get_length(r->body));
    struct timeval tv = {HEAD_TIMEOUT, 0};
    evtimer_add(c->timer, &tv);
    return 0;
}

static int on_url(http_parser *p, const char *at, size_t len)
{
    return hdrs_text(&((struct conn *)p->data)->req.h, at, len);
}

static int on_field(http_parser *p, const char *at, size_t len)
{
    return hdrs_field(&((struct conn *)p->data)->req.h, at, len);
}

static int on_value(http_parser *p, const char *at, size_t len)
{
    return hdrs_value(&((struct conn *)p->data)->req.h, at, len);
}

static int on_headers(http_parser *p)
{
    struct conn *c = p->data;
    struct front_req *r = &c->req;
    if (hdrs_end(&r->h) < 0) /* the last value, or the URL when there are no headers */
        return -1;
    evtimer_del(c->timer);
    if (p->content_length != ULLONG_MAX && p->content_length > c->f->max_body) {
        c->too_large = true;
        return -1;
    }
    const char *expect = front_header(r, "Expect");
    if (expect && !strcasecmp(expect, "100-continue")) {
        evbuffer_add_printf(c->out, "HTTP/1.1 100 Continue\r\n\r\n");
        flush_out(c);
    }
    return 0;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
    struct conn *c = p->data;
    if (evbuffer_get_length(c->req.body) + len > c->f->max_body) {
        c->too_large = true;
        return -1;
    }
    evbuffer_add(c->req.body, at, len);
    return 0;
}

static int on_complete(http_parser *p)
{
    struct conn *c = p->data;
    static const enum evhttp_cmd_type methods[] = {
        [HTTP_GET] = EVHTTP_REQ_GET,       [HTTP_POST] = EVHTTP_REQ_POST,
        [HTTP_HEAD] = EVHTTP_REQ_HEAD,     [HTTP_PUT] = EVHTTP_REQ_PUT,
        [HTTP_DELETE] = EVHTTP_REQ_DELETE, [HTTP_OPTIONS] = EVHTTP_REQ_OPTIONS,
        [HTTP_PATCH] = EVHTTP_REQ_PATCH,
    };
    c->req.method = p->method < sizeof methods / sizeof methods[0] && methods[p->method]
                        ? methods[p->method]
                        : EVHTTP_REQ_GET;
    c->req.keep_alive = http_should_keep_alive(p) != 0;
    c->complete = true;
    http_parser_pause(p, 1);
    return 0;
}

static const http_parser_settings settings = {
    .on_message_begin = on_begin,
    .on_url = on_url,
    .on_header_field = on_field,
    .on_header_value = on_value,
    .on_headers_complete = on_headers,
    .on_body = on_body,
    .on_message_complete = on_complete,
};

static void refuse(struct conn *c, int status, const char *msg)
{
    struct front_req *r = &c->req;
    static const char *const n[] = {"Content-Type"};
    static const char *const v[] = {"application/json"};
    char body[256];
    int len = snprintf(body, sizeof body, "{\"error\":{\"message\":\"%s\",\"type\":\"%s\"}}\n", msg,
                       reason(status));
    r->keep_alive = false;
    c->busy = true;
    front_reply(r, status, n, v, 1, body, (size_t)len);
}

/* Feeds what was read to the parser, up to one whole request. */
static void parse_more(struct conn *c)
{
    while (!c->busy && !c->dead && !c->closing && evbuffer_get_length(c->in)) {
        size_t n = evbuffer_get_length(c->in);
        const char *data = (const char *)evbuffer_pullup(c->in, -1);
        if (HTTP_PARSER_ERRNO(&c->parser) == HPE_PAUSED)
            http_parser_pause(&c->parser, 0);
        size_t used = http_parser_execute(&c->parser, &settings, data, n);
        enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
        if (c->complete) {
            evbuffer_drain(c->in, used);
            c->complete = false;
            c->busy = true;
            c->f->ops->request(c->f->arg, &c->req);
            continue;
        }
        if (e != HPE_OK && e != HPE_PAUSED) {
            if (c->too_large)
                refuse(c, 413, "the request is larger than max_body");
            else if (c->req.h.overflow)
                refuse(c, 431, "the request's headers are too large");
            else
                refuse(c, 400, "malformed HTTP request");
            return;
        }
        evbuffer_drain(c->in, used);
    }
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    struct conn *c = arg;
    char buf[65536]; /* recv(2) here: evbuffer_read asks FIONREAD first, a call more */
    c->guard++;
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n > 0)
            evbuffer_add(c->in, buf, (size_t)n);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0) { /* the client left */
            if (c->busy && c->req.arg)
                c->f->ops->closed(c->f->arg, &c->req, c->req.arg);
            c->busy = false;
            c->dead = true;
            break;
        }
        if (c->closing) { /* after a refusal: read and drop, so that it gets the answer */
            evbuffer_drain(c->in, evbuffer_get_length(c->in));
            continue;
        }
        if (evbuffer_get_length(c->in) > HDRS_BYTES + c->f->max_body + 65536) {
            c->dead = true; /* far more than one request could be: not HTTP */
            break;
        }
        if ((size_t)n < sizeof buf)
            break; /* drained; what comes later is a new edge */
    }
    if (!c->dead)
        parse_more(c);
    if (--c->guard == 0 && c->dead)
        conn_free(c);
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct conn *c = arg;
    if (c->busy)
        return;
    c->guard++;
    if (!c->req.h.len && !evbuffer_get_length(c->in))
        c->dead = true; /* an idle keep-alive connection: closed quietly */
    else
        refuse(c, 408, "the request did not arrive in time");
    if (--c->guard == 0 && c->dead)
        conn_free(c);
}

static void conn_free(struct conn *c)
{
    event_free(c->rd);
    event_free(c->wr);
    event_free(c->timer);
    evbuffer_free(c->in);
    evbuffer_free(c->out);
    evbuffer_free(c->req.body);
    close(c->fd);
    free(c);
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len,
                      void *arg)
{
    (void)l;
    (void)sa;
    (void)len;
    struct front *f = arg;
    struct conn *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        return;
    }
    c->f = f;
    c->fd = fd;
    c->req.c = c;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    evutil_make_socket_nonblocking(fd);
    http_parser_init(&c->parser, HTTP_REQUEST);
    c->parser.data = c;
    c->in = evbuffer_new();
    c->out = evbuffer_new();
    c->req.body = evbuffer_new();
    /* edge-triggered: the socket is read until drained at every event, and
     * epoll need not poll it again at the next wait as it does level-triggered */
    c->rd = event_new(f->base, fd, EV_READ | EV_PERSIST | EV_ET, on_read, c);
    c->wr = event_new(f->base, fd, EV_WRITE, on_write, c);
    c->timer = evtimer_new(f->base, on_timeout, c);
    struct timeval tv = {HEAD_TIMEOUT, 0};
    if (!c->in || !c->out || !c->req.body || !c->rd || !c->wr || !c->timer ||
        event_add(c->rd, NULL) < 0 || evtimer_add(c->timer, &tv) < 0) {
        if (c->rd)
            event_free(c->rd);
        if (c->wr)
            event_free(c->wr);
        if (c->timer)
            event_free(c->timer);
        if (c->in)
            evbuffer_free(c->in);
        if (c->out)
            evbuffer_free(c->out);
        if (c->req.body)
            evbuffer_free(c->req.body);
        close(fd);
        free(c);
    }
}

int front_listen(struct event_base *base, const char *host, unsigned port, size_t max_body,
                 const struct front_ops *ops, void *arg, char *err, size_t len)
{
    struct front *f = calloc(1, sizeof *f);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (!f || inet_pton(AF_INET, host, &a.sin_addr) != 1) {
        snprintf(err, len, "%s: an IPv4 address, like 127.0.0.1", host);
        free(f);
        return -1;
    }
    *f = (struct front){base, max_body, ops, arg};
    struct evconnlistener *l = evconnlistener_new_bind(
        base, on_accept, f, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE, 512,
        (struct sockaddr *)&a, sizeof a);
    if (!l) {
        snprintf(err, len, "cannot listen on %s:%u: %s", host, port, strerror(errno));
        free(f);
        return -1;
    }
    return 0;
}

enum evhttp_cmd_type front_method(const struct front_req *r)
{
    return r->method;
}

const char *front_uri(const struct front_req *r)
{
    return r->h.buf;
}

size_t front_headers(const struct front_req *r, const char *const **names,
                     const char *const **values)
{
    *names = r->h.names;
    *values = r->h.values;
    return r->h.n;
}

const char *front_header(const struct front_req *r, const char *name)
{
    return hdrs_get(&r->h, name);
}

struct evbuffer *front_body(struct front_req *r)
{
    return r->body;
}

void front_set_arg(struct front_req *r, void *arg)
{
    r->arg = arg;
}
