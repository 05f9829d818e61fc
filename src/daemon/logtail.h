/* logtail: a model's log over the control API (GET /v1/models/NAME/log):
 * its last lines, and with follow, every line added after them, as
 * server-sent events, for as long as the client listens. One timer polls
 * every follower once a second, and runs only while someone follows. */
#ifndef VRAM_DAEMON_LOGTAIL_H
#define VRAM_DAEMON_LOGTAIL_H

#include <stdbool.h>

#define LOGTAIL_MAX_FOLLOWERS 32
#define LOGTAIL_MAX_LINES     1000

struct event_base;
struct front_req;
struct logtail;

struct logtail *logtail_new(struct event_base *base);
void logtail_free(struct logtail *lt);

/* Answers req with the last `lines` lines of the log at path: as
 * text/plain (404 when there is no log yet), or with follow as a stream of
 * events that goes on with each line written (a "reset" event when the
 * file starts over). 503 when LOGTAIL_MAX_FOLLOWERS follow already. */
void logtail_serve(struct logtail *lt, struct front_req *req, const char *path, unsigned lines,
                   bool follow);

/* r's client left: true when r was a follower's (dropped now). */
bool logtail_closed(struct logtail *lt, const struct front_req *r);

#endif
