/* panel: requests passed from the proxy's clients to the control socket,
 * over the relay's connections (a few kept open for the next). Each one
 * lives from its client's request to the end of the answer or the
 * client's leaving, whichever comes first. */
#include "proxy/panel.h"

#include <event2/buffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/front.h"
#include "http/relay.h"

#define MAX_PASSES 64

struct pass {
    struct panel *pn;
    struct front_req *client; /* NULL once the answer is whole or the client left */
    struct relay_conn *up;
    bool started;
};

struct panel {
    struct event_base *base;
    char socket[512];
    struct pass *live[MAX_PASSES];
    unsigned nlive;
    struct relay_conn *idle[8];
    unsigned nidle;
};

struct panel *panel_new(struct event_base *base, const char *socket)
{
    struct panel *pn = calloc(1, sizeof *pn);
    if (!pn)
        return NULL;
    pn->base = base;
    snprintf(pn->socket, sizeof pn->socket, "%s", socket);
    return pn;
}

static void end(struct pass *p)
{
    struct panel *pn = p->pn;
    for (unsigned k = 0; k < pn->nlive; k++)
        if (pn->live[k] == p) {
            pn->live[k] = pn->live[--pn->nlive];
            break;
        }
    free(p);
}

static void up_headers(void *arg, int status, const char *const *names, const char *const *values,
                       size_t n)
{
    struct pass *p = arg;
    const char *keep_n[64], *keep_v[64];
    bool has_length;
    size_t k = relay_end_to_end(names, values, n, keep_n, keep_v, 64, &has_length);
    p->started = true;
    front_reply_start(p->client, status, keep_n, keep_v, k, has_length);
}

static void up_body(void *arg, const char *data, size_t len)
{
    struct pass *p = arg;
    front_reply_part(p->client, data, len);
}

static void up_done(void *arg)
{
    struct pass *p = arg;
    struct front_req *r = p->client;
    front_set_arg(r, NULL);
    front_reply_end(r);
    relay_put(p->up, p->pn->idle, &p->pn->nidle, sizeof p->pn->idle / sizeof p->pn->idle[0]);
    end(p);
}

static void up_error(void *arg, const char *why)
{
    struct pass *p = arg;
    struct front_req *r = p->client;
    front_set_arg(r, NULL);
    if (p->started) {
        front_abort(r);
    } else {
        char msg[200];
        snprintf(msg, sizeof msg, "the control socket did not answer (%s)", why);
        front_error(r, ERRBODY_BACKEND, msg, 0);
    }
    relay_close(p->up);
    end(p);
}

static const struct relay_ops up_ops = {up_headers, up_body, up_done, up_error};

bool panel_route(struct panel *pn, struct front_req *r, const char *path, bool keys_set,
                 bool authorized)
{
    bool page = !strcmp(path, "/ui") || !strncmp(path, "/ui/", 4);
    if (!page && strncmp(path, "/vram/", 6))
        return false;
    if (!page && !keys_set && !authorized) {
        front_error(r, ERRBODY_FORBIDDEN,
                    "the control API is served on this address only with a token (token = in "
                    "[serve]) or to the page vram ui opens; else use the control socket",
                    0);
        return true;
    }
    if (!page && !authorized) {
        front_error(r, ERRBODY_UNAUTHORIZED, "this address wants Authorization: Bearer TOKEN", 0);
        return true;
    }
    struct pass *p = pn->nlive < MAX_PASSES ? calloc(1, sizeof *p) : NULL;
    if (!p) {
        front_error(r, ERRBODY_UNAVAILABLE,
                    "too many requests for the control API at once; try again", 1);
        return true;
    }
    p->pn = pn;
    p->client = r;
    /* the key and the session stop here: the socket asks for none */
    const char *const *names, *const *values;
    size_t n = front_headers(r, &names, &values);
    const char *keep_n[64], *keep_v[64];
    size_t k = 0;
    for (size_t i = 0; i < n && k < 64; i++)
        if (strcasecmp(names[i], "Authorization") && strcasecmp(names[i], "Cookie") &&
            strcasecmp(names[i], "X-Vram-Session")) {
            keep_n[k] = names[i];
            keep_v[k++] = values[i];
        }
    p->up = relay_get_path(pn->base, pn->idle, &pn->nidle, pn->socket);
    if (!p->up) {
        free(p);
        front_error(r, ERRBODY_BACKEND, "cannot reach the control socket", 0);
        return true;
    }
    /* registered first: a write that fails calls up_error inside relay_send */
    pn->live[pn->nlive++] = p;
    front_set_arg(r, p);
    if (relay_send(p->up, front_method(r), front_uri(r), keep_n, keep_v, k, front_body(r), &up_ops,
                   p) < 0) {
        front_set_arg(r, NULL);
        relay_close(p->up);
        end(p);
        front_error(r, ERRBODY_BACKEND, "cannot reach the control socket", 0);
    }
    return true;
}

bool panel_closed(struct panel *pn, void *req_arg)
{
    for (unsigned k = 0; pn && k < pn->nlive; k++)
        if (pn->live[k] == req_arg) {
            struct pass *p = pn->live[k];
            relay_close(p->up); /* the socket's side sees the client gone */
            end(p);
            return true;
        }
    return false;
}
