/* evcap: a cap on the connections of one of libevent's HTTP servers (the
 * control socket, the metrics address), which libevent 2.1 does not have:
 * each accepted connection is counted from its first moment and told gone
 * by its close callback; at the cap the listener is held (fdguard) and new
 * connections wait in the kernel's queue. An idle connection is closed by
 * the server's own timeout. The close callback is this file's: others set
 * theirs through evcap_closecb, which it calls first. */
#ifndef VRAM_DAEMON_EVCAP_H
#define VRAM_DAEMON_EVCAP_H

struct event_base;
struct evhttp;
struct evhttp_connection;
struct evcap;
struct fdguard;

/* For http, at most max connections. NULL on no memory (then uncapped). */
struct evcap *evcap_new(struct event_base *base, struct evhttp *http, unsigned max);

/* The guard of http's listener, held at the cap. */
void evcap_watch(struct evcap *c, struct fdguard *g);

/* evhttp_connection_set_closecb for a connection of any server: kept
 * beside the count's own (cb NULL: none). */
void evcap_closecb(struct evhttp_connection *conn, void (*cb)(struct evhttp_connection *, void *),
                   void *arg);

#endif
