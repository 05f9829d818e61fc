/* reqlog: a proxied request's end, said and counted: its log line (built
 * without printf, whose format parsing showed in profiles of the proxy
 * under load) and its model's statistics for /metrics. */
#ifndef VRAM_PROXY_REQLOG_H
#define VRAM_PROXY_REQLOG_H

#include <stdint.h>

#include "proxy/proxy.h"

/* A request's moments, monotonic microseconds (0: not reached). */
struct reqlog_times {
    uint64_t t0, granted, first, end;
};

/* "proxy MODEL URI STATUS wait W, first byte F, total T[, held H][, key
 * NAME]" to stderr; held_ms: how long its model was preempted meanwhile;
 * key: the name of the key it came with, or NULL. */
void reqlog_line(const char *model, const char *uri, int status, const struct reqlog_times *t,
                 uint64_t held_ms, const char *key);

/* Its status and durations into st. */
void reqlog_count(struct proxy_stats *st, int status, const struct reqlog_times *t);

#endif
