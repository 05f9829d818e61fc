/* proxyops: the daemon as the proxy sees it: one table of operations,
 * filled by the daemon (daemon/toproxy.c) and handed to proxy_listen. The
 * proxy includes nothing else of the daemon (scripts/check-layout says
 * so): what it may read of the model table and ask of the scheduler is
 * all here. Every operation runs on the loop's thread, returns at once
 * and never calls back into the proxy before it returns, except where
 * said. */
#ifndef VRAM_PROXY_PROXYOPS_H
#define VRAM_PROXY_PROXYOPS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/config.h"
#include "core/sched.h"

struct event_base;
struct front_req;

/* One model of the table, as of now (proxyops.model): pointers into the
 * daemon's table, good until the loop turns. */
struct proxyops_model {
    const char *name;               /* its name in the table */
    const struct config_model *cfg; /* its configuration: api, concurrency, api_key,
                                     * upstream_name, aliases, file, command */
    enum sched_state state;
    unsigned port;        /* where its process listens (127.0.0.1) */
    uint64_t size;        /* what it takes on its GPUs (its need, times its width) */
    uint64_t out_wall_ms; /* wall clock: when it last left VRAM (suspended) */
};

struct proxyops {
    void *d; /* the daemon, handed back to every operation */
    struct event_base *base;
    /* [serve]'s settings (listen, socket, keys, origins, hosts, max_body,
     * client_timeout_s, max_queue, wait_s, logs, path): a reload changes
     * them in place, so the proxy reads them here each time */
    const struct config *cfg;

    /* How many rows the model table has (removed models included: model()
     * says false for them). Reads only. */
    unsigned (*count)(void *d);
    /* Model i now, into *out: false when it was removed by a reload (or i
     * is past the table). Reads only. */
    bool (*model)(void *d, unsigned i, struct proxyops_model *out);
    /* The model a client's name means: its own name, an alias, either with
     * or without Ollama's ":latest" (daemon/names.h); -1 for none. Reads
     * only. */
    int (*find)(void *d, const char *name);
    /* Asks the scheduler for model, held busy until release(): it may start,
     * resume or evict models to make room. The answer goes, exactly once,
     * to proxy_granted or proxy_refused (proxy.h) with req, within wait_ms,
     * possibly before demand returns; the id goes to *idp first. 0 when too
     * many demands wait (neither is called). */
    uint64_t (*demand)(void *d, unsigned model, uint64_t wait_ms, void *req, uint64_t *idp);
    /* The asker of demand id is gone before its answer: neither callback
     * will be called, and the scheduler forgets the demand. */
    void (*withdraw)(void *d, unsigned model, uint64_t id);
    /* One hold on model less (a granted demand's), at a request's end;
     * keep_set: the request asked how long its model stays after (keep_ms;
     * 0: evict once idle, SCHED_FOREVER: for good). May start the next
     * step of the scheduler (answers to other demands included). */
    void (*release)(void *d, unsigned model, bool keep_set, uint64_t keep_ms);
    /* Time model's requests have spent held while it was preempted, all
     * told: a request's share is the difference across its life. Reads
     * only. */
    uint64_t (*held_ms)(void *d, unsigned model);
    /* The context a request for model asks for (Ollama's options.num_ctx
     * in body, which may be NULL, or the X-Vram-Num-Ctx header, which may
     * be NULL): a discovered model runs with it from now on (a process with
     * another is restarted once idle). NULL, or what is wrong (400). */
    const char *(*ask_ctx)(void *d, unsigned model, const json_t *body, const char *header);
    /* Wall clock: when model leaves VRAM once idle (its keep-alive from now
     * while it answers); SCHED_FOREVER: never. Reads only. */
    uint64_t (*expires_wall_ms)(void *d, unsigned model);
    /* Answers r as the control socket does (/ui, /vram/...), the proxy
     * having checked its Host and key: r is the control API's from here,
     * its client's leaving included (front_set_ops). May answer r before
     * it returns. */
    void (*control)(void *d, struct front_req *r);
};

#endif
