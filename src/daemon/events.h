/* events: the live event stream of `vram serve` (GET /v1/events, server-
 * sent events): who listens, each event, as one JSON line, to all of
 * them, and the last EVENTS_HISTORY events for a listener that asks for
 * them. A listener may also ask for the state every second ("live": a
 * "snapshot" and a "models" event), made once and sent to all who asked. A
 * listener that leaves is dropped when its connection closes (the control
 * API hands events_closed what http/front.c tells it). */
#ifndef VRAM_DAEMON_EVENTS_H
#define VRAM_DAEMON_EVENTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define EVENTS_MAX_LISTENERS 32
#define EVENTS_HISTORY       100

struct front_req;
struct events;

struct events *events_new(void);
void events_free(struct events *ev);

/* Answers req with the stream's head and keeps it: first the last
 * `history` events (at most EVENTS_HISTORY), then each as it happens, and
 * with live the state every second. False (nothing sent) when
 * EVENTS_MAX_LISTENERS listen already. */
bool events_listen(struct events *ev, struct front_req *r, unsigned history, bool live);

/* r's client left: true when r was a listener's (dropped now). */
bool events_closed(struct events *ev, const struct front_req *r);

/* How many listen now; how many of them asked for the state each second. */
unsigned events_listeners(const struct events *ev);
unsigned events_live_listeners(const struct events *ev);

/* {"t_ms", "model", "event", "seconds", "detail"} to every listener, and
 * "reason" when given (an eviction's, as data: not taken). */
void events_send(struct events *ev, uint64_t t_ms, const char *model, const char *kind,
                 double seconds, const char *detail, json_t *reason);

/* The state, as "snapshot" (the document of GET /v1/snapshot) and
 * "models" (that of GET /v1/models) events, to the live listeners: both
 * are JSON on one line. */
void events_live(struct events *ev, const char *snapshot, const char *models);

#endif
