/* frontout: the front's answers (frontout.c), and the client connection
 * its two halves share, included by them only: front.c reads requests and
 * owns the connection's life, frontout.c writes the answers. */
#ifndef VRAM_HTTP_FRONTOUT_H
#define VRAM_HTTP_FRONTOUT_H

#include <event2/event.h>
#include <http_parser.h>
#include <stdbool.h>

#include "http/front.h"
#include "http/hdrs.h"

#define LINGER_S    5 /* after our close, for the client's: what it still sends is dropped */
#define FRONT_EXTRA 1536

struct front {
    struct event_base *base;
    struct front_limits lim;
    struct timeval timeout;
    unsigned nconns;
    struct fdguard *guard; /* the listener's: paused at max_conns and out of descriptors */
    const struct front_ops *ops;
    void *arg;
};

struct front_req {
    struct conn *c;
    enum evhttp_cmd_type method;
    struct hdrs h; /* the URL, then the headers */
    bool keep_alive, http11, chunked, nobody, replying;
    bool trailers; /* past the headers: fields now are a chunked body's trailer, dropped */
    struct evbuffer *body;
    void *arg;
    const struct front_ops *ops; /* told of closed and drained: the server's, or front_set_ops's */
    void *ops_arg;
    char extra[FRONT_EXTRA]; /* front_add_header's lines, for every answer to this request */
    size_t extra_len;
};

struct conn {
    struct front *f;
    evutil_socket_t fd;
    struct event *rd, *wr, *timer;
    struct evbuffer *in, *out;
    http_parser parser;
    struct front_req req;
    bool reading;    /* a request has begun and is not whole yet */
    bool complete;   /* a whole request was parsed, the parser paused */
    bool busy;       /* the proxy has the request */
    bool closing;    /* close once the output is written */
    bool shut;       /* our side is shut: waiting for the client's close */
    bool peer_eof;   /* the client shut its side: answers still go out, then the end */
    bool stalled;    /* the output waits for the client to read */
    bool throttled;  /* the output is past FRONT_HIGH: the proxy is told when it is under LOW */
    bool dead;       /* closed; freed when no handler of ours is running */
    bool too_large;  /* answered 413: the rest is read and dropped */
    bool early;      /* refused by its headers before its 100 Continue: its body is never read */
    const char *bad; /* why the request cannot be passed on as it came (400), or NULL */
    int guard;
};

static inline void frontout_arm(struct conn *c, const struct timeval *tv)
{
    evtimer_add(c->timer, tv);
}

/* Called at the end of every entry point from outside the front: a
 * connection that died meanwhile is ended on the next loop turn. */
static inline void frontout_settle(struct conn *c)
{
    if (c->dead && !c->guard)
        event_active(c->timer, EV_TIMEOUT, 1);
}

/* front.c's: frees c and its request (no handler of ours running on it). */
void front_conn_free(struct conn *c);

/* front.c's: parses what c has read, as far as the proxy lets it. */
void front_parse_more(struct conn *c);

/* frontout.c's: writes what c's output holds, as far as the client takes
 * it; waits for it to become writable, or ends the connection as it
 * must. */
void frontout_flush(struct conn *c);

/* frontout.c's: the connection's writable event. */
void frontout_on_write(evutil_socket_t fd, short what, void *arg);

#endif
