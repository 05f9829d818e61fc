/* emit: what happened to a model, said once: to the log, the store and
 * the event stream (/v1/events). */
#ifndef VRAM_DAEMON_EMIT_H
#define VRAM_DAEMON_EMIT_H

#include <jansson.h>

#include "daemon/daemon.h"

/* Model's event kind ("ready", "suspended", "start failed"...), how long
 * it took (0: not said) and its detail (may be NULL). */
void emit_event(struct daemon *d, unsigned model, const char *kind, double seconds,
                const char *detail);

/* The same with what the event carries as data too (reason: its "reason"
 * object, taken; NULL: none). */
void emit_event_reason(struct daemon *d, unsigned model, const char *kind, double seconds,
                       const char *detail, json_t *reason);

#endif
