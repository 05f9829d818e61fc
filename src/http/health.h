/* health: whether a model's server answers yet. One GET of its health
 * path on a connection of its own (non-blocking, close-on-exec), the
 * status code of the answer (http-parser's) handed to a callback; not
 * libevent's HTTP client, whose connections a model process could
 * otherwise inherit. */
#ifndef VRAM_HTTP_HEALTH_H
#define VRAM_HTTP_HEALTH_H

struct event_base;
struct health;

/* status: the answer's code; 0 when none came (refused, closed, timed out) */
typedef void (*health_fn)(void *arg, int status);

/* Starts a check of http://127.0.0.1:port/path (path "": a connection
 * taken is 200, for servers without a health route); fn is called once, from
 * the loop, unless the check is cancelled first. NULL (fn not called) when
 * it cannot even start. */
struct health *health_check(struct event_base *base, unsigned port, const char *path,
                            unsigned timeout_ms, health_fn fn, void *arg);

/* Ends a check in flight; fn is not called. NULL: nothing. */
void health_cancel(struct health *h);

#endif
