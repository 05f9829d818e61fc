/* events: the live event stream of `vram serve` (GET /v1/events, server-
 * sent events): who listens, and each event, as one JSON line, to all of
 * them. A listener that leaves is dropped when its connection closes. */
#ifndef VRAM_DAEMON_EVENTS_H
#define VRAM_DAEMON_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#define EVENTS_MAX_LISTENERS 32

struct evhttp_request;
struct events;

struct events *events_new(void);
void events_free(struct events *ev);

/* Answers req with the stream's head and keeps it; false (nothing sent)
 * when EVENTS_MAX_LISTENERS listen already. */
bool events_listen(struct events *ev, struct evhttp_request *req);

/* How many listen now. */
unsigned events_listeners(const struct events *ev);

/* {"t_ms", "model", "event", "seconds", "detail"} to every listener. */
void events_send(struct events *ev, uint64_t t_ms, const char *model, const char *kind,
                 double seconds, const char *detail);

#endif
