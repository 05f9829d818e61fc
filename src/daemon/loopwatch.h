/* loopwatch: how late the daemon's loop runs. Everything the daemon does
 * for clients happens on one thread, so anything that holds it (a driver
 * call, a disk write, a slow client's bytes) holds every request. A timer
 * that should fire every LOOPWATCH_MS measures how late it fired (the
 * histogram /metrics and `vram ps --json` show); the loop's big callbacks
 * say what they are doing, and one that held the loop past
 * LOOPWATCH_WARN_MS is named in the log. */
#ifndef VRAM_DAEMON_LOOPWATCH_H
#define VRAM_DAEMON_LOOPWATCH_H

#include <stdint.h>

#include "core/hist.h"

#define LOOPWATCH_MS      50
#define LOOPWATCH_WARN_MS 100

struct event_base;

struct loopwatch_stats {
    struct hist lag;     /* how late the timer fired, each time */
    uint64_t max_ms;     /* the worst */
    uint64_t late;       /* times it was past LOOPWATCH_WARN_MS */
    char worst_what[64]; /* what held it the worst time, when it was said */
};

/* Starts the timer on base: 0, or -1. */
int loopwatch_start(struct event_base *base);

/* The loop is about to do what (a constant string); loopwatch_end when
 * done. Nested calls keep the outermost. */
void loopwatch_begin(const char *what);
void loopwatch_end(void);

const struct loopwatch_stats *loopwatch_stats(void);

#endif
