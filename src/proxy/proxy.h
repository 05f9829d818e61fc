/* proxy: one address for every model (`listen = HOST:PORT`). It owns its
 * requests, each model's queue over its concurrency limit and the pool of
 * idle connections to each model, and asks the scheduler for a model like
 * any client (a demand with a hold, while the answer streams), through the
 * daemon's table of operations (proxyops.h). */
#ifndef VRAM_PROXY_PROXY_H
#define VRAM_PROXY_PROXY_H

#include <stddef.h>
#include <stdint.h>

#include "core/hist.h"
#include "core/sched.h"
#include "proxy/proxyops.h"

#define PROXY_CODES 16

/* What /metrics says of a model's proxied requests. */
struct proxy_stats {
    struct {
        int code; /* 499: the client left first */
        uint64_t n;
    } codes[PROXY_CODES]; /* the first PROXY_CODES statuses seen; others count as 0 */
    unsigned ncodes;
    struct hist first_byte, total; /* seconds, waiting for the model included */
};

struct proxy;

/* Listens on ops->cfg->listen; *out stays NULL when it is empty. 0, or -1
 * with err. ops is copied. */
int proxy_listen(const struct proxyops *ops, struct proxy **out, char *err, size_t len);

/* The scheduler's answer to a request's demand (proxyops.demand): the model
 * is ready and held for req, or refused (why, and text for people). */
void proxy_granted(void *req, unsigned model);
void proxy_refused(void *req, unsigned model, enum sched_refusal why, const char *text);

/* Who asks in a request's demand (req, as proxyops.demand had it), for
 * people: "POST /v1/chat/completions, key apikey2" (the path without its
 * query, the key by its name). */
void proxy_request_name(const void *req, char *out, size_t len);

/* The daemon exits: vram ui's file goes (uikey.h). */
void proxy_exiting(struct proxy *p);

/* "http://HOST:PORT" of the dashboard's own address (dash.h), or NULL. */
const char *proxy_dashboard(const struct proxy *p);

/* The model's process is gone: its pooled connections go too. */
void proxy_forget_model(struct proxy *p, unsigned model);

/* Proxied requests being answered by model now (0 without a proxy). */
unsigned proxy_inflight(const struct proxy *p, unsigned model);

/* Requests waiting for model behind its concurrency limit. */
unsigned proxy_waiting(const struct proxy *p, unsigned model);

/* Model's request statistics (NULL without a proxy). */
const struct proxy_stats *proxy_stats(const struct proxy *p, unsigned model);

/* Seconds from the last proxied request to model to the first byte of its
 * answer, waiting for the model included; 0 before any. */
double proxy_last_ttfb(const struct proxy *p, unsigned model);

#endif
