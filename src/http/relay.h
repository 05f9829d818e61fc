/* relay: the proxy's side toward the models: keep-alive connections on
 * plain non-blocking sockets, each registered with the loop once; a
 * request is written at once (not on the next loop turn); the answer is
 * parsed by http-parser and handed over as it arrives. */
#ifndef VRAM_DAEMON_RELAY_H
#define VRAM_DAEMON_RELAY_H

#include <event2/event.h>
#include <event2/http.h>
#include <stdbool.h>
#include <stddef.h>

struct relay_conn;

struct relay_ops {
    /* status line and headers arrived; header values are NUL-terminated
     * pairs in names[i], values[i] */
    void (*headers)(void *arg, int status, const char *const *names, const char *const *values,
                    size_t n);
    void (*body)(void *arg, const char *data, size_t len);
    /* the whole answer arrived; the connection goes back to the pool */
    void (*done)(void *arg);
    /* the connection failed or closed before the answer was whole */
    void (*error)(void *arg, const char *why);
};

/* A connection to 127.0.0.1:port (from pool, or new). NULL on failure. */
struct relay_conn *relay_get(struct event_base *base, struct relay_conn **pool, unsigned *npool,
                             unsigned port);

/* Sends method uri with the client's headers (hop-by-hop ones, Expect
 * and those the Connection header names dropped; Host and Content-Length
 * set) and body; the answer goes to ops, 1xx answers skipped. 0, or -1
 * when the connection is broken (ops are not called). */
int relay_send(struct relay_conn *c, enum evhttp_cmd_type method, const char *uri,
               const char *const *names, const char *const *values, size_t nheaders,
               struct evbuffer *body, const struct relay_ops *ops, void *arg);

/* Back to the pool after done, if it may be reused; else closed. */
/* Stops reading the answer (pause) while its client is behind, or goes on. */
void relay_pause(struct relay_conn *c, bool pause);
void relay_put(struct relay_conn *c, struct relay_conn **pool, unsigned *npool, unsigned max);

/* Closes it now, its answer unread; no more callbacks. */
void relay_close(struct relay_conn *c);

/* Whether a header is hop-by-hop (not passed on by a proxy). */
bool relay_hop_by_hop(const char *name);

/* An answer's headers to pass on, into kn/kv (at most max): hop-by-hop
 * ones and those its Connection header names dropped, and the backend's
 * CORS (Access-Control-*: llama-server's allows any origin; the proxy
 * answers CORS itself, browser.h); Content-Length kept (has_length says
 * whether there was one). How many. */
size_t relay_end_to_end(const char *const *names, const char *const *values, size_t n,
                        const char **kn, const char **kv, size_t max, bool *has_length);

#endif
