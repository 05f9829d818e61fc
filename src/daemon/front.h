/* front: the proxy's side toward clients: an HTTP/1.1 server on plain
 * sockets, each registered with the loop once, requests parsed by
 * http-parser, answers written at once (a write that would block waits for
 * the socket). One request at a time per connection; keep-alive,
 * pipelining, Expect: 100-continue, size limits and a deadline for slow
 * clients. */
#ifndef VRAM_DAEMON_FRONT_H
#define VRAM_DAEMON_FRONT_H

#include <event2/event.h>
#include <event2/http.h>
#include <stdbool.h>
#include <stddef.h>

struct front_req;

struct front_ops {
    /* a whole request arrived */
    void (*request)(void *arg, struct front_req *r);
    /* its client left before the answer was whole: r is gone after this */
    void (*closed)(void *arg, struct front_req *r, void *req_arg);
};

int front_listen(struct event_base *base, const char *host, unsigned port, size_t max_body,
                 const struct front_ops *ops, void *arg, char *err, size_t len);

enum evhttp_cmd_type front_method(const struct front_req *r);
const char *front_uri(const struct front_req *r);
/* The request's headers, as arrays; how many. */
size_t front_headers(const struct front_req *r, const char *const **names,
                     const char *const **values);
const char *front_header(const struct front_req *r, const char *name);
struct evbuffer *front_body(struct front_req *r);
/* What closed() hands back. */
void front_set_arg(struct front_req *r, void *arg);

/* A whole answer; the request is done. */
void front_reply(struct front_req *r, int status, const char *const *names,
                 const char *const *values, size_t n, const char *body, size_t len);
/* An answer in parts: with has_length the headers carry Content-Length and
 * the parts are sent as they are; without, they are sent chunked. The
 * status line and headers leave with the first part (or the end). */
void front_reply_start(struct front_req *r, int status, const char *const *names,
                       const char *const *values, size_t n, bool has_length);
void front_reply_part(struct front_req *r, const char *data, size_t len);
void front_reply_end(struct front_req *r);
/* Mid-answer failure: the connection is closed, so that the client sees a
 * broken transfer; the request is done. */
void front_abort(struct front_req *r);

#endif
