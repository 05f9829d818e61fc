/* front: vram's one HTTP/1.1 server (the proxy's address, the control
 * socket, the metrics address) on plain sockets, each registered with the
 * loop once, requests parsed by
 * http-parser, answers written at once (a write that would block waits for
 * the socket). One request at a time per connection; keep-alive,
 * pipelining, Expect: 100-continue, HTTP/1.0, size limits, a deadline for
 * slow clients and a cap on connections below the descriptor limit. */
#ifndef VRAM_DAEMON_FRONT_H
#define VRAM_DAEMON_FRONT_H

#include <event2/event.h>
#include <event2/http.h>
#include <stdbool.h>
#include <stddef.h>

#include "http/errbody.h"

struct front;
struct front_req;

struct front_ops {
    /* a whole request arrived */
    void (*request)(void *arg, struct front_req *r);
    /* its client left before the answer was whole: r is gone after this */
    void (*closed)(void *arg, struct front_req *r, void *req_arg);
    /* its client took enough of what front_backlogged said was too much (may be NULL) */
    void (*drained)(void *arg, struct front_req *r, void *req_arg);
    /* a request's headers asked for 100 Continue: whether they pass the
     * server's checks (Host, Origin). false: no 100, the body is not read,
     * request() gets it without one and its connection closes after the
     * answer, which is request()'s refusal. NULL: every request passes */
    bool (*head)(void *arg, const struct front_req *r);
    /* the dialect of the route uri names (its request line's, as far as it
     * came), for error answers (front_error, and the server's own: 408,
     * 413, 431, 501). NULL: ERRBODY_PLAIN, the control API's */
    enum errbody_dialect (*dialect)(void *arg, const char *uri);
};

struct front_limits {
    size_t max_body;    /* larger request bodies get 413 */
    double timeout_s;   /* an idle connection, or a request still arriving, is closed after this;
                         * so is one whose client reads nothing of its answer for this long */
    unsigned max_conns; /* 0: from the descriptor limit, keeping some for everything else */
};

/* A server with no address yet (front_listen, front_adopt). NULL on no memory. */
struct front *front_new(struct event_base *base, const struct front_limits *lim,
                        const struct front_ops *ops, void *arg);
/* Listens on host:port (an IPv4 address, or a name resolved once, now);
 * what names it in the log ("the proxy"): 0,
 * or -1 with err. */
int front_listen(struct front *f, const char *host, unsigned port, const char *what, char *err,
                 size_t len);
/* Serves fd, a socket its owner bound and made listen (the control
 * socket, whose file mode and group are the owner's to set): 0, or -1 with
 * err (fd closed). */
int front_listen_fd(struct front *f, evutil_socket_t fd, const char *what, char *err, size_t len);
/* A connected socket, served as an accepted one (tests, the fuzz target). 0, or -1 (closed). */
int front_adopt(struct front *f, evutil_socket_t fd);
/* Client connections open now. */
unsigned front_open(const struct front *f);

enum evhttp_cmd_type front_method(const struct front_req *r);
/* More of the answer waits for its client than the proxy should hold
 * (1 MiB): stop reading its backend until ops->drained. */
bool front_backlogged(struct front_req *r);
const char *front_uri(const struct front_req *r);
/* The request's headers, as arrays; how many. */
size_t front_headers(const struct front_req *r, const char *const **names,
                     const char *const **values);
const char *front_header(const struct front_req *r, const char *name);
struct evbuffer *front_body(struct front_req *r);
/* What closed() hands back. */
void front_set_arg(struct front_req *r, void *arg);
/* r's closed and drained go to ops with arg from now on, not to its
 * server's: for a module that answers requests of another server (the
 * control API, those the proxy passes it). Reset at the next request. */
void front_set_ops(struct front_req *r, const struct front_ops *ops, void *arg);

/* A whole answer; the request is done. */
void front_reply(struct front_req *r, int status, const char *const *names,
                 const char *const *values, size_t n, const char *body, size_t len);
/* An error answer in the route's dialect (errbody.h), with Retry-After
 * when retry_after > 0, and WWW-Authenticate: Bearer on a 401; the
 * request is done. */
void front_error(struct front_req *r, enum errbody_kind kind, const char *msg, int retry_after);
/* The methods the proxy knows; any other is answered 501 with this as Allow. */
#define FRONT_ALLOW "GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH"

/* A header for every answer to r, its error answers included (CORS, Allow):
 * false when it does not fit (1.5 KiB in all) or holds a line break. */
bool front_add_header(struct front_req *r, const char *name, const char *value);

/* An answer in parts: with has_length the headers carry Content-Length and
 * the parts are sent as they are; without, they are sent chunked to an
 * HTTP/1.1 client, and to an HTTP/1.0 one up to the connection's close.
 * The status line and headers leave with the first part (or the end). */
void front_reply_start(struct front_req *r, int status, const char *const *names,
                       const char *const *values, size_t n, bool has_length);
void front_reply_part(struct front_req *r, const char *data, size_t len);
/* front_reply_part of all b holds (b is left empty). */
void front_reply_buffer(struct front_req *r, struct evbuffer *b);
/* front_reply_start for a stream of server-sent events: 200,
 * text/event-stream, not to be cached; its events go as parts. */
void front_reply_events(struct front_req *r);
void front_reply_end(struct front_req *r);
/* Mid-answer failure: the connection is closed, so that the client sees a
 * broken transfer; the request is done. */
void front_abort(struct front_req *r);

#endif
