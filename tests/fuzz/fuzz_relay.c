/* Fuzz target: what a backend receives through the proxy's two HTTP ends
 * (http/front.c toward clients, http/relay.c toward models, with hdrs.c
 * and wbuf.c). The input is what a client sends, in pieces, into one end
 * of a socket pair front.c serves; each request it hands over is passed
 * on by relay_send, as the proxy passes one, to a fake backend on the
 * loopback that parses what it gets. Checked: the backend reads exactly
 * the requests the proxy passed on, one for one, each with the method,
 * URI, headers and body the proxy gave it (a request smuggled in a
 * header, a body read as a request, a header split in two, would show as
 * one more request or one that differs); every header name it sees is a
 * token, Host and Content-Length come once each. Request smuggling
 * through a header the proxy reads one way and a backend another
 * ("Content-Length : 5", issue 42, item 6) failed here. */
#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <http_parser.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http/front.h"
#include "http/hdrs.h"
#include "http/relay.h"

#define MAX_REQS 64

static struct event_base *base;
static struct front *front;
static unsigned backend_port;

/* ---- what the proxy passed on ---- */

struct sent {
    enum evhttp_cmd_type method;
    char uri[512];
    struct evbuffer *body;
    const char *names[HDRS_MAX], *values[HDRS_MAX];
    size_t n;
    struct hdrs h; /* the storage of names and values */
};
static struct sent sent[MAX_REQS];
static unsigned nsent;

struct pending {
    struct front_req *client;
    struct relay_conn *up;
};
static struct relay_conn *pool[4];
static unsigned npool;

static void up_headers(void *arg, int status, const char *const *names,
                       const char *const *values, size_t n)
{
    (void)arg, (void)status, (void)names, (void)values, (void)n;
}

static void up_body(void *arg, const char *data, size_t len)
{
    (void)arg, (void)data, (void)len;
}

static void up_done(void *arg)
{
    struct pending *p = arg;
    if (p->client)
        front_reply(p->client, 200, NULL, NULL, 0, "ok\n", 3);
    relay_put(p->up, pool, &npool, 4);
    free(p);
}

static void up_error(void *arg, const char *why)
{
    (void)why;
    struct pending *p = arg;
    if (p->client)
        front_reply(p->client, 502, NULL, NULL, 0, "", 0);
    relay_close(p->up);
    free(p);
}

static const struct relay_ops up_ops = {up_headers, up_body, up_done, up_error};

static void on_request(void *arg, struct front_req *r)
{
    (void)arg;
    enum evhttp_cmd_type m = front_method(r);
    const char *uri = front_uri(r);
    if (nsent == MAX_REQS || strlen(uri) >= sizeof sent[0].uri || uri[0] != '/') {
        front_reply(r, 404, NULL, NULL, 0, "", 0);
        return;
    }
    struct sent *s = &sent[nsent];
    s->method = m;
    snprintf(s->uri, sizeof s->uri, "%s", uri);
    evbuffer_drain(s->body, evbuffer_get_length(s->body));
    evbuffer_add(s->body, evbuffer_pullup(front_body(r), -1), evbuffer_get_length(front_body(r)));
    /* the headers as the proxy passes them on: the relay drops hop-by-hop ones */
    const char *const *names, *const *values;
    size_t n = front_headers(r, &names, &values);
    hdrs_reset(&s->h);
    s->n = 0;
    for (size_t i = 0; i < n; i++)
        if (!relay_hop_by_hop(names[i])) {
            if (hdrs_field(&s->h, names[i], strlen(names[i])) < 0 ||
                hdrs_value(&s->h, values[i], strlen(values[i])) < 0)
                abort(); /* front.c took a header hdrs now refuses */
        }
    hdrs_end(&s->h);
    for (size_t i = 0; i < s->h.n; i++) {
        s->names[s->n] = s->h.names[i];
        s->values[s->n++] = s->h.values[i];
    }
    struct pending *p = calloc(1, sizeof *p);
    p->client = r;
    p->up = relay_get(base, pool, &npool, backend_port);
    if (!p->up || relay_send(p->up, m, uri, names, values, n, front_body(r), &up_ops, p) < 0) {
        relay_close(p->up);
        free(p);
        front_reply(r, 502, NULL, NULL, 0, "", 0);
        return;
    }
    front_set_arg(r, p);
    nsent++;
}

static void on_closed(void *arg, struct front_req *r, void *req_arg)
{
    (void)arg, (void)r;
    struct pending *p = req_arg;
    p->client = NULL;
}

static const struct front_ops ops = {on_request, on_closed, NULL, NULL};

/* ---- the backend: what it reads, checked against what was sent ---- */

struct backend {
    int fd;
    struct event *ev;
    http_parser parser;
    struct hdrs h;
    struct evbuffer *body;
};
static unsigned nreceived;
static struct backend *backends[16];
static unsigned nbackends;

static int b_begin(http_parser *p)
{
    struct backend *b = p->data;
    hdrs_reset(&b->h);
    evbuffer_drain(b->body, evbuffer_get_length(b->body));
    return 0;
}

static int b_url(http_parser *p, const char *at, size_t len)
{
    return hdrs_text(&((struct backend *)p->data)->h, at, len);
}

static int b_field(http_parser *p, const char *at, size_t len)
{
    struct backend *b = p->data;
    if (hdrs_field(&b->h, at, len) < 0 && b->h.badname)
        abort(); /* a name that is no token reached the backend */
    return 0;
}

static int b_value(http_parser *p, const char *at, size_t len)
{
    hdrs_value(&((struct backend *)p->data)->h, at, len);
    return 0;
}

static int b_headers(http_parser *p)
{
    struct backend *b = p->data;
    hdrs_end(&b->h);
    return 0;
}

static int b_body(http_parser *p, const char *at, size_t len)
{
    evbuffer_add(((struct backend *)p->data)->body, at, len);
    return 0;
}

static const char *method_name(enum evhttp_cmd_type m)
{
    switch (m) {
    case EVHTTP_REQ_GET: return "GET";
    case EVHTTP_REQ_POST: return "POST";
    case EVHTTP_REQ_HEAD: return "HEAD";
    case EVHTTP_REQ_PUT: return "PUT";
    case EVHTTP_REQ_DELETE: return "DELETE";
    case EVHTTP_REQ_OPTIONS: return "OPTIONS";
    case EVHTTP_REQ_PATCH: return "PATCH";
    default: return "?";
    }
}

static int b_complete(http_parser *p)
{
    struct backend *b = p->data;
    if (nreceived >= nsent)
        abort(); /* a request the proxy never passed on */
    const struct sent *s = &sent[nreceived++];
    if (strcmp(http_method_str((enum http_method)p->method), method_name(s->method)) ||
        strcmp(b->h.buf, s->uri))
        abort(); /* another request line than the proxy's */
    size_t n = evbuffer_get_length(b->body);
    if (n != evbuffer_get_length(s->body) ||
        (n && memcmp(evbuffer_pullup(b->body, -1), evbuffer_pullup(s->body, -1), n)))
        abort(); /* another body */
    size_t k = 0;
    unsigned hosts = 0, lengths = 0;
    for (size_t i = 0; i < b->h.n; i++) {
        if (!strcasecmp(b->h.names[i], "Host")) {
            hosts++;
            continue;
        }
        if (!strcasecmp(b->h.names[i], "Content-Length")) {
            lengths++;
            continue;
        }
        /* the others: the client's, in its order, each whole (those the
         * Connection header lists are dropped on the way) */
        while (k < s->n &&
               (strcmp(b->h.names[i], s->names[k]) || strcmp(b->h.values[i], s->values[k])))
            k++;
        if (k++ >= s->n)
            abort(); /* a header the client did not send, or not as it sent it */
    }
    if (hosts != 1 || lengths != 1)
        abort();
    return 0;
}

static const http_parser_settings bsettings = {
    .on_message_begin = b_begin,
    .on_url = b_url,
    .on_header_field = b_field,
    .on_header_value = b_value,
    .on_headers_complete = b_headers,
    .on_body = b_body,
    .on_message_complete = b_complete,
};

static void b_read(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    struct backend *b = arg;
    char buf[65536];
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        event_del(b->ev);
        return;
    }
    unsigned before = nreceived;
    size_t used = http_parser_execute(&b->parser, &bsettings, buf, (size_t)n);
    if (b->parser.http_errno != HPE_OK || used != (size_t)n)
        abort(); /* the proxy wrote what an HTTP parser cannot read */
    for (unsigned i = before; i < nreceived; i++)
        if (send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 38, MSG_NOSIGNAL) != 38)
            abort();
}

static void b_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int len,
                     void *arg)
{
    (void)l, (void)sa, (void)len, (void)arg;
    if (nbackends == sizeof backends / sizeof backends[0]) {
        close(fd);
        return;
    }
    struct backend *b = calloc(1, sizeof *b);
    b->fd = fd;
    b->body = evbuffer_new();
    http_parser_init(&b->parser, HTTP_REQUEST);
    b->parser.data = b;
    evutil_make_socket_nonblocking(fd);
    b->ev = event_new(base, fd, EV_READ | EV_PERSIST, b_read, b);
    event_add(b->ev, NULL);
    backends[nbackends++] = b;
}

static void backends_free(void)
{
    for (unsigned i = 0; i < nbackends; i++) {
        event_free(backends[i]->ev);
        evbuffer_free(backends[i]->body);
        close(backends[i]->fd);
        free(backends[i]);
    }
    nbackends = 0;
}

/* ---- the client ---- */

static void drain(int fd, bool *eof)
{
    char buf[65536];
    for (;;) {
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r > 0)
            continue;
        if (r == 0 || (errno != EAGAIN && errno != EINTR))
            *eof = true;
        return;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!base) {
        base = event_base_new();
        struct front_limits lim = {.max_body = 4096, .timeout_s = 60};
        front = front_new(base, &lim, &ops, NULL);
        struct sockaddr_in a = {.sin_family = AF_INET};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        struct evconnlistener *l = evconnlistener_new_bind(
            base, b_accept, NULL, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 64,
            (struct sockaddr *)&a, sizeof a);
        socklen_t al = sizeof a;
        if (!base || !front || !l ||
            getsockname(evconnlistener_get_fd(l), (struct sockaddr *)&a, &al) < 0)
            abort();
        backend_port = ntohs(a.sin_port);
        for (unsigned i = 0; i < MAX_REQS; i++)
            sent[i].body = evbuffer_new();
    }
    nsent = nreceived = 0;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
        return 0;
    if (front_adopt(front, sv[0]) < 0) {
        close(sv[1]);
        return 0;
    }
    bool eof = false;
    size_t piece = 1 + size % 53, off = 0;
    for (unsigned spins = 0; off < size && !eof && spins < 100000; spins++) {
        size_t n = size - off < piece ? size - off : piece;
        ssize_t w = send(sv[1], data + off, n, MSG_NOSIGNAL);
        if (w > 0)
            off += (size_t)w;
        else if (w < 0 && errno != EAGAIN && errno != EINTR)
            break;
        event_base_loop(base, EVLOOP_NONBLOCK);
        drain(sv[1], &eof);
    }
    /* until every request passed on has reached the backend and been answered */
    for (unsigned spins = 0; spins < 10000 && nreceived < nsent && !eof; spins++) {
        event_base_loop(base, EVLOOP_NONBLOCK);
        drain(sv[1], &eof);
    }
    for (unsigned spins = 0; spins < 200; spins++)
        event_base_loop(base, EVLOOP_NONBLOCK);
    close(sv[1]);
    for (unsigned spins = 0; front_open(front) && spins < 100; spins++)
        event_base_loop(base, EVLOOP_NONBLOCK);
    while (npool)
        relay_close(pool[--npool]);
    for (unsigned spins = 0; spins < 20; spins++)
        event_base_loop(base, EVLOOP_NONBLOCK);
    backends_free();
    if (nreceived > nsent)
        abort();
    return 0;
}
