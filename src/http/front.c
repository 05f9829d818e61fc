/* front: HTTP/1.1 toward the proxy's clients, on plain sockets.
 *
 * libevent 2.1's server writes an answer one loop turn after it is given
 * and re-registers the socket around it; with relay.c on the other side
 * that was most of a proxied request's system calls. Here a connection is
 * registered for reading once; answers are written where they are made
 * (frontout.c).
 * The request is parsed by http-parser; vram writes the answers' status
 * lines, headers and chunk framing, which is all the HTTP it writes.
 *
 * A connection's one timer says how long it may stay as it is: idle
 * between requests, a request arriving (from its first byte to its last),
 * an answer its client reads nothing of, a close the client has not
 * acknowledged. While the proxy has the request and the client takes what
 * it is sent (a long stream, or one held while its model is suspended) no
 * timer runs. A connection that fails while the proxy writes to it is
 * ended on the next loop turn (the timer, made active), never inside the
 * proxy's own call. */
#include "http/frontout.h"

#include "http/fdguard.h"
#include "http/hdrs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <event2/buffer.h>
#include <event2/listener.h>
#include <http_parser.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- reading ---- */

static int on_begin(http_parser *p)
{
    struct conn *c = p->data;
    struct front_req *r = &c->req;
    hdrs_reset(&r->h);
    r->chunked = r->nobody = r->trailers = false;
    r->arg = NULL;
    r->ops = c->f->ops;
    r->ops_arg = c->f->arg;
    r->extra_len = 0;
    evbuffer_drain(r->body, evbuffer_get_length(r->body));
    c->bad = NULL;
    c->early = false;
    c->reading = true;
    frontout_arm(c, &c->f->timeout); /* the whole request, from its first byte */
    return 0;
}

/* The URL goes on to a backend in the request line the relay writes: a
 * blank or a control in it (http-parser, not strict, passes tabs and form
 * feeds) would split that line differently there. */
static int on_url(http_parser *p, const char *at, size_t len)
{
    struct conn *c = p->data;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)at[i] <= ' ' || at[i] == 0x7f) {
            c->bad = "the request line holds a blank or a control character in its URL";
            return -1;
        }
    return hdrs_text(&c->req.h, at, len);
}

static int on_field(http_parser *p, const char *at, size_t len)
{
    struct conn *c = p->data;
    struct front_req *r = &c->req;
    if (r->trailers)
        return 0;
    int rc = hdrs_field(&r->h, at, len);
    if (rc < 0 && r->h.badname) /* RFC 9112 5.1: a server MUST answer 400 */
        c->bad = "a header's name is not a token (a blank before its colon?)";
    return rc;
}

static int on_value(http_parser *p, const char *at, size_t len)
{
    struct front_req *r = &((struct conn *)p->data)->req;
    return r->trailers ? 0 : hdrs_value(&r->h, at, len);
}

static int on_headers(http_parser *p)
{
    struct conn *c = p->data;
    struct front_req *r = &c->req;
    if (hdrs_end(&r->h) < 0) /* the last value, or the URL when there are no headers */
        return -1;
    unsigned hosts = 0;
    for (size_t i = 0; i < r->h.n; i++) {
        hosts += !strcasecmp(r->h.names[i], "Host");
        /* http-parser 2.9, under many C servers, takes a name that begins
         * with Transfer-Encoding ("Transfer-Encodingx") for the header
         * itself and refuses the Content-Length the relay then sends (found
         * by fuzz_relay): a request it would frame otherwise than we do */
        if (!strncasecmp(r->h.names[i], "Transfer-Encoding", 17) && r->h.names[i][17]) {
            c->bad = "a header's name begins with Transfer-Encoding and goes on (a typo?)";
            return -1;
        }
    }
    if (hosts > 1) { /* RFC 9112 3.2: 400; the proxy and a backend could each take another */
        c->bad = "the request has more than one Host header";
        return -1;
    }
    r->trailers = true;
    r->http11 = p->http_major > 1 || (p->http_major == 1 && p->http_minor >= 1);
    bool has_body =
        (p->flags & F_CHUNKED) || (p->content_length && p->content_length != ULLONG_MAX);
    if (p->content_length != ULLONG_MAX && p->content_length > c->f->lim.max_body) {
        c->too_large = true;
        return -1;
    }
    /* answered here, never passed on (the relay drops Expect): a backend's
     * own 100 would otherwise be read as its answer. Only once the headers
     * pass the server's own checks (Host, Origin): a request they refuse is
     * answered without its body, which the client then need not send, and
     * its connection closed (RFC 9110 10.1.1) */
    const char *expect = front_header(r, "Expect");
    if (expect && !strcasecmp(expect, "100-continue") && r->http11 && has_body) {
        if (r->ops->head && !r->ops->head(r->ops_arg, r)) {
            c->early = true;
            return 1; /* no body: the request is whole as it is */
        }
        evbuffer_add(c->out, "HTTP/1.1 100 Continue\r\n\r\n", 25);
        frontout_flush(c);
    }
    return 0;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
    struct conn *c = p->data;
    if (evbuffer_get_length(c->req.body) + len > c->f->lim.max_body) {
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
    /* 0: one the proxy does not know (PROPFIND, TRACE, CONNECT), refused */
    c->req.method = p->method < sizeof methods / sizeof methods[0] ? methods[p->method] : 0;
    c->req.keep_alive = !c->early && http_should_keep_alive(p) != 0;
    c->reading = false;
    c->complete = true;
    evtimer_del(c->timer); /* the proxy has it now: as long as its answer takes */
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

/* The request cannot be read: answered, and the connection closed. */
static void refuse(struct conn *c, enum errbody_kind kind, const char *msg)
{
    struct front_req *r = &c->req;
    r->h.buf[r->h.len] = '\0'; /* the URL, as far as it came, for the answer's dialect */
    r->keep_alive = false;
    r->method = EVHTTP_REQ_GET;
    r->extra_len = 0; /* what the last request's answers carried is not this one's */
    c->reading = false;
    c->busy = true;
    front_error(r, kind, msg, 0);
}

/* Feeds what was read to the parser, up to one whole request. */
void front_parse_more(struct conn *c)
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
            if (c->dead) /* its 100 Continue could not be written: the client is gone */
                return;
            c->busy = true;
            if (!c->req.method) { /* never passed on as another method */
                front_add_header(&c->req, "Allow", FRONT_ALLOW);
                front_error(&c->req, ERRBODY_NOT_IMPLEMENTED,
                            "the proxy does not implement this method (Allow: " FRONT_ALLOW ")", 0);
                continue;
            }
            c->f->ops->request(c->f->arg, &c->req);
            continue;
        }
        if (e != HPE_OK && e != HPE_PAUSED) {
            char msg[160];
            if (c->too_large)
                refuse(c, ERRBODY_TOO_LARGE, "the request is larger than max_body");
            else if (c->bad)
                refuse(c, ERRBODY_BAD_REQUEST, c->bad);
            else if (c->req.h.overflow)
                refuse(c, ERRBODY_HEADERS_TOO_BIG, "the request's headers are too large");
            else if (snprintf(msg, sizeof msg, "malformed HTTP request (%s)",
                              http_errno_description(e)) > 0)
                refuse(c, ERRBODY_BAD_REQUEST, msg);
            return;
        }
        evbuffer_drain(c->in, used);
    }
}

/* The client is gone: the proxy is told if it had the request. */
static void gone(struct conn *c)
{
    if (c->busy && c->req.arg) {
        void *a = c->req.arg;
        c->req.arg = NULL;
        c->req.ops->closed(c->req.ops_arg, &c->req, a);
    }
    c->busy = false;
    c->dead = true;
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
    struct conn *c = arg;
    char buf[65536]; /* recv(2) here: evbuffer_read asks FIONREAD first, a call more */
    c->guard++;
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n == 0) {
            c->peer_eof = true;
            break;
        }
        if (n < 0) { /* reset: the client left */
            gone(c);
            break;
        }
        if (c->closing) /* after a refusal: read and drop, so that it gets the answer */
            continue;
        evbuffer_add(c->in, buf, (size_t)n);
        size_t cap = HDRS_BYTES + c->f->lim.max_body + 65536;
        if (evbuffer_get_length(c->in) > cap) {
            /* parsed before judged: a body announced too large is refused
             * (413) and its rest dropped, not taken for garbage */
            front_parse_more(c);
            if (c->dead)
                break;
            if (c->closing) {
                evbuffer_drain(c->in, evbuffer_get_length(c->in));
            } else if (evbuffer_get_length(c->in) > cap) {
                gone(c); /* far more than one request could be: not HTTP */
                break;
            }
        }
        /* drained; what comes later is a new edge. Unless the client has
         * closed too: its end may have come with the last of its data, in
         * the same edge, and would never be seen (a client that left while
         * its request waited for a model would go on being served) */
        if ((size_t)n < sizeof buf && !(what & EV_CLOSED))
            break;
    }
    if (!c->dead)
        front_parse_more(c); /* what came before the end is answered */
    if (c->peer_eof && !c->dead) {
        if (c->busy || c->reading || !evbuffer_get_length(c->out)) {
            /* the client left mid-answer, or mid-request (a half-close looks the
             * same, and streams are cancelled by it); or all is said */
            gone(c);
        } else {
            c->closing = true; /* its last answers still go out */
            evtimer_del(c->timer);
        }
    }
    if (--c->guard == 0 && c->dead) {
        gone(c); /* a request it still had is told, whatever made it dead */
        front_conn_free(c);
    }
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct conn *c = arg;
    c->guard++;
    if (c->dead || c->shut || c->busy || c->closing) /* failed, lingered, or reads nothing */
        gone(c);
    else if (c->reading)
        refuse(c, ERRBODY_TIMEOUT, "the request did not arrive in time (client_timeout)");
    else
        c->dead = true; /* an idle keep-alive connection: closed quietly */
    if (--c->guard == 0 && c->dead)
        front_conn_free(c);
}

void front_conn_free(struct conn *c)
{
    struct front *f = c->f;
    event_free(c->rd);
    event_free(c->wr);
    event_free(c->timer);
    evbuffer_free(c->in);
    evbuffer_free(c->out);
    evbuffer_free(c->req.body);
    close(c->fd);
    free(c);
    if (f->nconns-- == f->lim.max_conns)
        fdguard_hold(f->guard, false);
}

int front_adopt(struct front *f, evutil_socket_t fd)
{
    struct conn *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        return -1;
    }
    c->f = f;
    c->fd = fd;
    c->req.c = c;
    c->req.ops = f->ops;
    c->req.ops_arg = f->arg;
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
    c->rd = event_new(f->base, fd, EV_READ | EV_CLOSED | EV_PERSIST | EV_ET, on_read, c);
    c->wr = event_new(f->base, fd, EV_WRITE, frontout_on_write, c);
    c->timer = evtimer_new(f->base, on_timeout, c);
    if (!c->in || !c->out || !c->req.body || !c->rd || !c->wr || !c->timer ||
        event_add(c->rd, NULL) < 0 || evtimer_add(c->timer, &f->timeout) < 0) {
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
        return -1;
    }
    /* at the cap, the listener waits (connections queue in the kernel) and
     * the descriptors left serve the models, the control socket, the logs */
    if (++f->nconns == f->lim.max_conns)
        fdguard_hold(f->guard, true);
    return 0;
}

static void on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len,
                      void *arg)
{
    (void)l;
    (void)sa;
    (void)len;
    front_adopt(arg, fd);
}

struct front *front_new(struct event_base *base, const struct front_limits *lim,
                        const struct front_ops *ops, void *arg)
{
    struct front *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    *f = (struct front){.base = base, .lim = *lim, .ops = ops, .arg = arg};
    double t = lim->timeout_s > 0 ? lim->timeout_s : 60;
    f->timeout.tv_sec = (time_t)t;
    f->timeout.tv_usec = (suseconds_t)((t - (double)(time_t)t) * 1e6);
    if (!f->lim.max_conns) {
        /* a quarter of the descriptors, 32 to 1024, stay for the rest */
        struct rlimit rl = {1024, 1024};
        getrlimit(RLIMIT_NOFILE, &rl);
        rlim_t all =
            rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1u << 20 ? 1u << 20 : rl.rlim_cur;
        rlim_t keep = all / 4 < 32 ? 32 : all / 4 > 1024 ? 1024 : all / 4;
        f->lim.max_conns = all > 2 * keep ? (unsigned)(all - keep) : (unsigned)(all / 2 + 1);
    }
    return f;
}

/* Accepts on l, which names what in the log; 0, or -1 with err. */
static int serve(struct front *f, struct evconnlistener *l, const char *what, char *err, size_t len)
{
    if (!l) {
        snprintf(err, len, "cannot serve %s: %s", what, strerror(errno));
        return -1;
    }
    f->guard = fdguard_watch(l, what);
    return 0;
}

int front_listen_fd(struct front *f, evutil_socket_t fd, const char *what, char *err, size_t len)
{
    struct evconnlistener *l = evconnlistener_new(
        f->base, on_accept, f, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
    if (!l)
        close(fd);
    return serve(f, l, what, err, len);
}

int front_listen(struct front *f, const char *host, unsigned port, const char *what, char *err,
                 size_t len)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
        /* a name (localhost, the machine's own): resolved once, at start */
        struct addrinfo hint = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
        if (getaddrinfo(host, NULL, &hint, &res) != 0 || !res) {
            snprintf(err, len, "%s: not an IPv4 address or a name this machine resolves "
                               "(try 127.0.0.1)", host);
            return -1;
        }
        a.sin_addr = ((const struct sockaddr_in *)res->ai_addr)->sin_addr;
        freeaddrinfo(res);
    }
    struct evconnlistener *l = evconnlistener_new_bind(
        f->base, on_accept, f, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE,
        512, (struct sockaddr *)&a, sizeof a);
    if (!l) {
        snprintf(err, len, "cannot listen on %s:%u: %s", host, port, strerror(errno));
        return -1;
    }
    return serve(f, l, what, err, len);
}

unsigned front_open(const struct front *f)
{
    return f->nconns;
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

void front_set_ops(struct front_req *r, const struct front_ops *ops, void *arg)
{
    r->ops = ops;
    r->ops_arg = arg;
}
