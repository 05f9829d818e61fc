/* health: connect, write one request, read the status line, close. The
 * answer's status is all that counts, read by http-parser as every answer
 * the daemon reads (relay.c, the CLI's client). Without a path (health =
 * none), the connection taken is the answer: 200. */
#include "http/health.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/event.h>
#include <http_parser.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct health {
    int fd;
    struct event *ev;
    health_fn fn;
    void *arg;
    char req[512];
    size_t req_len, sent;
    http_parser parser;
    int status; /* once the parser has it */
};

static void done(struct health *h, int status)
{
    health_fn fn = h->fn;
    void *arg = h->arg;
    health_cancel(h);
    fn(arg, status);
}

/* The status line is whole (its reason phrase follows the code; an answer
 * without one has it by the end of its headers): the rest is not read. */
static int got_status(http_parser *p)
{
    ((struct health *)p->data)->status = (int)p->status_code;
    return -1;
}

static int on_status(http_parser *p, const char *at, size_t len)
{
    (void)at;
    (void)len;
    return got_status(p);
}

static const http_parser_settings status_only = {.on_status = on_status,
                                                 .on_headers_complete = got_status};

static void on_io(evutil_socket_t fd, short what, void *arg)
{
    struct health *h = arg;
    if (what & EV_TIMEOUT) {
        done(h, 0);
        return;
    }
    if (h->sent < h->req_len || !h->req_len) { /* connected, or the last write took part */
        int err = 0;
        socklen_t el = sizeof err;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 || err) {
            done(h, 0);
            return;
        }
        if (!h->req_len) { /* health = none: a connection taken is ready */
            done(h, 200);
            return;
        }
        ssize_t w = send(fd, h->req + h->sent, h->req_len - h->sent, MSG_NOSIGNAL);
        if (w < 0 && errno != EAGAIN && errno != EINTR) {
            done(h, 0);
            return;
        }
        h->sent += w > 0 ? (size_t)w : 0;
        if (h->sent == h->req_len) { /* now the answer */
            event_del(h->ev);
            event_assign(h->ev, event_get_base(h->ev), fd, EV_READ | EV_PERSIST, on_io, h);
            struct timeval tv = {2, 0};
            event_add(h->ev, &tv);
        }
        return;
    }
    char buf[256];
    ssize_t r = recv(fd, buf, sizeof buf, 0);
    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (r <= 0) {
        done(h, 0);
        return;
    }
    http_parser_execute(&h->parser, &status_only, buf, (size_t)r);
    if (h->status)
        done(h, h->status);
    else if (HTTP_PARSER_ERRNO(&h->parser) != HPE_OK)
        done(h, 0); /* not HTTP */
}

struct health *health_check(struct event_base *base, unsigned port, const char *path,
                            unsigned timeout_ms, health_fn fn, void *arg)
{
    struct health *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    int n = !*path ? 0
                   : snprintf(h->req, sizeof h->req,
                              "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nConnection: close\r\n\r\n",
                              path, port);
    h->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (n < 0 || (size_t)n >= sizeof h->req || h->fd < 0 ||
        (connect(h->fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS)) {
        if (h->fd >= 0)
            close(h->fd);
        free(h);
        return NULL;
    }
    h->req_len = (size_t)n;
    http_parser_init(&h->parser, HTTP_RESPONSE);
    h->parser.data = h;
    h->fn = fn;
    h->arg = arg;
    h->ev = event_new(base, h->fd, EV_WRITE | EV_PERSIST, on_io, h);
    struct timeval tv = {(time_t)(timeout_ms / 1000), (suseconds_t)(timeout_ms % 1000) * 1000};
    if (!h->ev || event_add(h->ev, &tv) < 0) {
        if (h->ev)
            event_free(h->ev);
        close(h->fd);
        free(h);
        return NULL;
    }
    return h;
}

void health_cancel(struct health *h)
{
    if (!h)
        return;
    event_free(h->ev);
    close(h->fd);
    free(h);
}
