/* events: server-sent events, streamed by http/front.c. A listener that
 * leaves is taken off the list when front says so (events_closed), so an
 * event is never written to a request that is gone. The history is a ring
 * of the events' JSON lines, kept whether anyone listens or not (events
 * are a few a second at most). */
#include "daemon/events.h"

#include <event2/buffer.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "app/render_json.h"
#include "http/front.h"

struct listener {
    struct front_req *req;
    bool live;
};

struct events {
    struct listener l[EVENTS_MAX_LISTENERS];
    unsigned n;
    char *history[EVENTS_HISTORY]; /* a ring: the oldest at next when full */
    unsigned next, kept;
};

struct events *events_new(void)
{
    return calloc(1, sizeof(struct events));
}

void events_free(struct events *ev)
{
    if (!ev)
        return;
    for (unsigned k = 0; k < EVENTS_HISTORY; k++)
        free(ev->history[k]);
    free(ev);
}

bool events_closed(struct events *ev, const struct front_req *r)
{
    for (unsigned k = 0; k < ev->n; k++)
        if (ev->l[k].req == r) {
            ev->l[k] = ev->l[--ev->n];
            return true;
        }
    return false;
}

static void add_data(struct evbuffer *b, const char *type, const char *json)
{
    if (type)
        evbuffer_add_printf(b, "event: %s\n", type);
    evbuffer_add_printf(b, "data: %s\n\n", json);
}

bool events_listen(struct events *ev, struct front_req *r, unsigned history, bool live)
{
    if (ev->n == EVENTS_MAX_LISTENERS)
        return false;
    /* listed first: a part that finds the client gone is told on a later turn */
    struct listener *l = &ev->l[ev->n++];
    l->req = r;
    l->live = live;
    front_set_arg(r, ev);
    front_reply_events(r);
    /* a comment line, which clients skip: the head goes out now, and a
     * client knows it is listening before the first event */
    struct evbuffer *b = evbuffer_new();
    if (b) {
        evbuffer_add_printf(b, ": vram serve events\n\n");
        if (history > ev->kept)
            history = ev->kept;
        for (unsigned k = 0; k < history; k++) {
            unsigned at = (ev->next + EVENTS_HISTORY - history + k) % EVENTS_HISTORY;
            add_data(b, NULL, ev->history[at]);
        }
        front_reply_buffer(r, b);
        evbuffer_free(b);
    }
    return true;
}

unsigned events_listeners(const struct events *ev)
{
    return ev->n;
}

unsigned events_live_listeners(const struct events *ev)
{
    unsigned n = 0;
    for (unsigned k = 0; k < ev->n; k++)
        n += ev->l[k].live;
    return n;
}

static void to_all(struct events *ev, bool live_only, const char *type, const char *json)
{
    for (unsigned k = 0; k < ev->n; k++) {
        if (live_only && !ev->l[k].live)
            continue;
        struct evbuffer *b = evbuffer_new();
        if (!b)
            return;
        add_data(b, type, json);
        front_reply_buffer(ev->l[k].req, b);
        evbuffer_free(b);
    }
}

void events_send(struct events *ev, uint64_t t_ms, const char *model, const char *kind,
                 double seconds, const char *detail, json_t *reason)
{
    json_t *j = json_pack("{s:I, s:s, s:s, s:f, s:s}", "t_ms", (json_int_t)t_ms, "model", model,
                          "event", kind, "seconds", seconds, "detail", detail ? detail : "");
    if (j && reason)
        json_object_set(j, "reason", reason);
    char *text = j ? json_dumps(j, JSON_COMPACT | RENDER_JSON_REALS) : NULL;
    json_decref(j);
    if (!text)
        return;
    to_all(ev, false, NULL, text);
    free(ev->history[ev->next]);
    ev->history[ev->next] = text;
    ev->next = (ev->next + 1) % EVENTS_HISTORY;
    if (ev->kept < EVENTS_HISTORY)
        ev->kept++;
}

void events_live(struct events *ev, const char *snapshot, const char *models)
{
    to_all(ev, true, "snapshot", snapshot);
    to_all(ev, true, "models", models);
}
