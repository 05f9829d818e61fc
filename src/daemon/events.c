/* events: server-sent events over libevent's evhttp. Each listener's
 * connection is watched: its close callback takes it off the list, so an
 * event is never written to a request that is gone. */
#include "daemon/events.h"

#include <event2/buffer.h>
#include <event2/http.h>
#include <jansson.h>
#include <stdlib.h>

struct events {
    struct evhttp_request *req[EVENTS_MAX_LISTENERS];
    struct evhttp_connection *conn[EVENTS_MAX_LISTENERS];
    unsigned n;
};

struct events *events_new(void)
{
    return calloc(1, sizeof(struct events));
}

void events_free(struct events *ev)
{
    free(ev);
}

static void closed(struct evhttp_connection *c, void *arg)
{
    struct events *ev = arg;
    for (unsigned k = 0; k < ev->n; k++)
        if (ev->conn[k] == c) {
            ev->n--;
            ev->req[k] = ev->req[ev->n];
            ev->conn[k] = ev->conn[ev->n];
            return;
        }
}

bool events_listen(struct events *ev, struct evhttp_request *req)
{
    if (ev->n == EVENTS_MAX_LISTENERS)
        return false;
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      "text/event-stream");
    evhttp_send_reply_start(req, 200, "OK");
    /* a comment line, which clients skip: the head goes out now, and a
     * client knows it is listening before the first event */
    struct evbuffer *b = evbuffer_new();
    if (b) {
        evbuffer_add_printf(b, ": vram serve events\n\n");
        evhttp_send_reply_chunk(req, b);
        evbuffer_free(b);
    }
    ev->req[ev->n] = req;
    ev->conn[ev->n] = evhttp_request_get_connection(req);
    evhttp_connection_set_closecb(ev->conn[ev->n], closed, ev);
    ev->n++;
    return true;
}

unsigned events_listeners(const struct events *ev)
{
    return ev->n;
}

void events_send(struct events *ev, uint64_t t_ms, const char *model, const char *kind,
                 double seconds, const char *detail)
{
    if (!ev->n)
        return;
    json_t *j = json_pack("{s:I, s:s, s:s, s:f, s:s}", "t_ms", (json_int_t)t_ms, "model", model,
                          "event", kind, "seconds", seconds, "detail", detail ? detail : "");
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    for (unsigned k = 0; text && k < ev->n; k++) {
        struct evbuffer *b = evbuffer_new();
        if (!b)
            break;
        evbuffer_add_printf(b, "data: %s\n\n", text);
        evhttp_send_reply_chunk(ev->req[k], b);
        evbuffer_free(b);
    }
    free(text);
}
