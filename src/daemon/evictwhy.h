/* evictwhy: why the scheduler moved a model out (core/sched.h's
 * sched_out: for which model, which request asked for it, how much that
 * model needed and what was free, why this one and not another), said in
 * words for the log and the events' detail, and as data: the events'
 * "reason", vram ps --json's "evicted", the dashboard's. */
#ifndef VRAM_DAEMON_EVICTWHY_H
#define VRAM_DAEMON_EVICTWHY_H

#include <jansson.h>
#include <stddef.h>

#include "daemon/daemon.h"

/* Model i was just moved out by the scheduler: who asked for the model it
 * made room for is noted now, while that demand waits. */
void evictwhy_note(struct daemon *d, unsigned i);

/* Model i's last eviction in words ("for qwen (POST /v1/chat/completions):
 * ..."); "" when it has none (never, or only as asked). */
void evictwhy_text(const struct daemon *d, unsigned i, char *out, size_t len);

/* The same as data: {"why", "for", "request", "gpu", "needed_bytes",
 * "free_bytes", "candidates", "priority", "last_used_ms", "stopped",
 * "at_ms", "text"}; NULL when it has none. */
json_t *evictwhy_json(const struct daemon *d, unsigned i);

#endif
