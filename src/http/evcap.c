/* evcap: counting an evhttp server's connections.
 *
 * evhttp asks for each accepted connection's bufferevent (its bevcb)
 * before it makes the connection; the connection itself is found on the
 * next turn of the loop, as the argument evhttp gave that bufferevent's
 * callbacks, and from then its close callback (called once, whichever
 * way it ends: closed, timed out, failed) counts it out. Until then the
 * bufferevent is held by a reference of ours, so that a connection evhttp
 * dropped at once is seen as dropped (its callbacks cleared), never as
 * freed memory. */
#include "http/evcap.h"

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <stdlib.h>

#include "http/fdguard.h"

#define NEW_MAX 256 /* connections accepted in one turn of the loop, found on the next */

struct conn {
    struct evcap *c;
    struct evhttp_connection *evcon;
    void (*cb)(struct evhttp_connection *, void *); /* its user's, evcap_closecb */
    void *arg;
    struct conn *next;
};

struct evcap {
    unsigned max, n;
    struct fdguard *g;
    struct event *settle;
    struct bufferevent *fresh[NEW_MAX];
    unsigned nfresh;
    struct conn *conns;
};

/* every connection of every capped server, for evcap_closecb */
static struct conn *all;

static void count_out(struct evcap *c)
{
    if (c->n-- == c->max)
        fdguard_hold(c->g, false);
}

static void closed(struct evhttp_connection *evcon, void *arg)
{
    struct conn *k = arg;
    for (struct conn **p = &all; *p; p = &(*p)->next)
        if (*p == k) {
            *p = k->next;
            break;
        }
    if (k->cb)
        k->cb(evcon, k->arg);
    count_out(k->c);
    free(k);
}

static void settle(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct evcap *c = arg;
    for (unsigned i = 0; i < c->nfresh; i++) {
        struct bufferevent *bev = c->fresh[i];
        bufferevent_data_cb rd, wr;
        bufferevent_event_cb ev;
        void *evcon = NULL;
        bufferevent_getcb(bev, &rd, &wr, &ev, &evcon);
        struct conn *k = ev && evcon ? calloc(1, sizeof *k) : NULL;
        if (k) {
            *k = (struct conn){.c = c, .evcon = evcon, .next = all};
            all = k;
            evhttp_connection_set_closecb(evcon, closed, k);
        } else { /* gone already (or no memory: then not counted) */
            count_out(c);
        }
        bufferevent_decref(bev);
    }
    c->nfresh = 0;
}

static struct bufferevent *make(struct event_base *base, void *arg)
{
    struct evcap *c = arg;
    struct bufferevent *bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (!bev || c->nfresh == NEW_MAX)
        return bev; /* evhttp makes its own without one: uncounted */
    bufferevent_incref(bev);
    c->fresh[c->nfresh++] = bev;
    event_active(c->settle, EV_TIMEOUT, 1);
    if (++c->n == c->max)
        fdguard_hold(c->g, true);
    return bev;
}

struct evcap *evcap_new(struct event_base *base, struct evhttp *http, unsigned max)
{
    struct evcap *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->max = max ? max : 1;
    c->settle = event_new(base, -1, 0, settle, c);
    if (!c->settle) {
        free(c);
        return NULL;
    }
    evhttp_set_bevcb(http, make, c);
    return c;
}

void evcap_watch(struct evcap *c, struct fdguard *g)
{
    if (c)
        c->g = g;
}

void evcap_closecb(struct evhttp_connection *conn, void (*cb)(struct evhttp_connection *, void *),
                   void *arg)
{
    for (struct conn *k = all; k; k = k->next)
        if (k->evcon == conn) {
            k->cb = cb;
            k->arg = arg;
            return;
        }
    evhttp_connection_set_closecb(conn, cb, arg); /* one not counted */
}
