/* demand: the demands waiting on the scheduler, each with who asked. The
 * control API (load, acquire) and the proxy (a request for a model) both
 * ask the scheduler for a model and hear back here, by the demand's id,
 * without knowing of each other. No I/O: a table and two callbacks. */
#ifndef VRAM_DAEMON_DEMAND_H
#define VRAM_DAEMON_DEMAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sched.h"

#define DEMAND_MAX 512

/* How the asker hears back: exactly one of the two, once. */
struct demand_ops {
    /* the model is ready (and held, if the demand asked for a hold) */
    void (*granted)(void *arg, unsigned model);
    /* it will not be: why in a word, and for people */
    void (*refused)(void *arg, unsigned model, enum sched_refusal why, const char *text);
};

struct demand {
    uint64_t id;
    const struct demand_ops *ops;
    void *arg;
    char who[96]; /* who asked, for people: "POST /v1/chat/completions", "vram load" */
};

struct demands {
    struct demand v[DEMAND_MAX];
    size_t n;
    uint64_t last_id;
};

/* A new demand's id, or 0 when DEMAND_MAX are waiting. */
uint64_t demand_add(struct demands *t, const struct demand_ops *ops, void *arg);

/* Says who asked for demand id (its callers' words; "" when unknown). */
void demand_set_who(struct demands *t, uint64_t id, const char *who);

/* Who asked for demand id, or NULL when it is not waiting. */
const char *demand_who(const struct demands *t, uint64_t id);

/* Takes the demand id out of the table: true with its asker, false when
 * there is none (answered already). */
bool demand_take(struct demands *t, uint64_t id, struct demand *out);

#endif
