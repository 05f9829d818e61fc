/* proxy: one address for every model. A request names its model (the
 * "model" field of an OpenAI or Ollama JSON body, or a /m/NAME/ prefix);
 * the proxy asks the scheduler for that model, held busy (a demand with a
 * hold, like an acquire), so it is started or resumed if needed and never
 * evicted mid-answer; then it passes the request through and streams the
 * answer back as it arrives, chunk by chunk. A client that leaves cancels
 * the upstream request; a backend that dies mid-answer cuts the client's
 * stream short (an error for it, not a hang). */
#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <sys/queue.h> /* before keyvalq_struct.h: TAILQ_FOREACH */

#include <event2/keyvalq_struct.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "host/clock.h"
#include "app/log.h"
#include "app/render_json.h"
#include "core/units.h"
#include "proxy/browser.h"
#include "http/fdguard.h"
#include "http/front.h"
#include "http/hdrs.h"
#include "conf/keys.h"
#include "proxy/modelpath.h"
#include "proxy/ollamaroutes.h"
#include "proxy/panel.h"
#include "proxy/proxy.h"
#include "proxy/reqlog.h"
#include "proxy/routes.h"
#include "http/relay.h"
#include "proxy/translate.h"
#include "proxy/dash.h"
#include "proxy/uikey.h"
#include "http/wbuf.h"

/* Per model: requests in flight, those over the concurrency limit, idle
 * keep-alive connections to its process. */
struct proxy_model {
    unsigned inflight;
    double last_ttfb_s; /* of the last answer: from the request to its first byte */
    struct proxy_stats stats;
    struct preq *waiting, *waiting_tail;
    struct relay_conn *idle[64];
    unsigned nidle;
};

struct proxy {
    struct proxyops ops;         /* the daemon (proxyops.h) */
    struct panel *panel;         /* /ui and /vram/...: the dashboard and the control API */
    struct ollamaroutes *ollama; /* Ollama's own routes: /, /api/tags, /api/ps, /api/show */
    struct browser *browser;     /* the rules for browsers: Host, Origin, CORS */
    struct dash *dash;           /* the dashboard, on an address of its own */
    struct front *front;         /* the server toward clients */
    uint64_t answers;            /* translated answers so far, for their ids */
    unsigned nwaiting;           /* requests not yet granted: for their model, or its turn */
    struct proxy_model pm[CONFIG_MAX_MODELS];
};

struct preq {
    struct proxy *px;
    struct front_req *client; /* NULL once answered, or once the client is gone */
    unsigned model;
    enum evhttp_cmd_type cmd;
    char uri[2048];
    struct evbuffer *body;
    struct relay_conn *up; /* while the backend answers */
    bool granted, started, finished;
    bool gone;        /* the client left */
    uint64_t demand;  /* its demand, while the scheduler has not answered it; 0: none */
    uint64_t held0;   /* its model's held time when it was granted (proxyops.held_ms) */
    bool keep_set;    /* the request asked how long its model stays (keep_alive) */
    uint64_t keep_ms; /* SCHED_FOREVER: for good */
    int status;
    int key;                         /* the client's key (keys.h), -1: none */
    uint64_t t0, t_granted, t_first; /* microseconds */
    /* a request on the API its backend does not speak (translate.h) */
    enum translate_route route;
    struct translate *tr;
    char xuri[64];         /* the backend's path for it (uri stays the client's, for the log) */
    bool load_only;        /* Ollama's load or unload: answered once the model is ready */
    uint64_t t_sent;       /* when it left for the backend */
    struct evbuffer *xout; /* the translated answer's next part */
    struct preq *next;     /* in the model's queue over its concurrency */
    bool waits;            /* counted in nwaiting (max_queue) */
};

/* Model m of the daemon's table, as of now. */
static struct proxyops_model view_of(const struct proxy *px, unsigned m)
{
    struct proxyops_model v;
    px->ops.model(px->ops.d, m, &v);
    return v;
}

/* The request is no longer waiting: granted, or done with. */
static void unwait(struct preq *p)
{
    if (p->waits) {
        p->waits = false;
        p->px->nwaiting--;
    }
}

/* The request's end, said once: its log line (the key by its name, never
 * the key itself) and its model's statistics, at one reading of the clock. */
static void ended(const struct preq *p)
{
    struct reqlog_times t = {p->t0, p->t_granted, p->t_first, clock_mono_us()};
    const struct proxyops *o = &p->px->ops;
    if (log_enabled(LOG_LV_INFO))
        reqlog_line(view_of(p->px, p->model).name, p->uri, p->status, &t,
                    p->granted ? o->held_ms(o->d, p->model) - p->held0 : 0,
                    p->key >= 0 ? o->cfg->keys.k[p->key].name : NULL);
    reqlog_count(&p->px->pm[p->model].stats, p->status, &t);
}

static void dispatch(struct proxy *px, unsigned model);

/* A model's log holds what it was asked and answered: a proxy's client,
 * who may be anyone with a key, never gets a line of it (one once got
 * another user's prompt with its error); the daemon's socket's people read
 * it (vram ps, vram load, the dashboard). */
#define FOR_ITS_LOG "; its log says more (vram ps, or the dashboard, for those who may use vram serve's socket)"

/* The end of a request, whichever way: the hold is given back, the next
 * waiting request may go, the connection is kept for another. */
static void finish(struct preq *p, bool keep_conn)
{
    struct proxy *px = p->px;
    struct proxy_model *pm = &px->pm[p->model];
    if (p->finished)
        return;
    p->finished = true;
    unwait(p);
    ended(p);
    if (p->client) /* not answered (a client that left has no request any more) */
        front_set_arg(p->client, NULL);
    if (p->up) {
        if (keep_conn)
            relay_put(p->up, pm->idle, &pm->nidle, sizeof pm->idle / sizeof pm->idle[0]);
        else
            relay_close(p->up);
    }
    if (p->granted) {
        pm->inflight--;
        px->ops.release(px->ops.d, p->model, p->keep_set, p->keep_ms);
    }
    evbuffer_free(p->body);
    translate_free(p->tr);
    if (p->xout)
        evbuffer_free(p->xout);
    unsigned model = p->model;
    free(p);
    dispatch(px, model);
}

/* ---- the backend's answer, streamed ---- */

static void up_headers(void *arg, int status, const char *const *names, const char *const *values,
                       size_t n)
{
    struct preq *p = arg;
    if (!p->client)
        return;
    p->status = status;
    const char *keep_n[64], *keep_v[64];
    bool has_length;
    size_t k = relay_end_to_end(names, values, n, keep_n, keep_v, 64, &has_length);
    p->t_first = clock_mono_us();
    p->px->pm[p->model].last_ttfb_s = (double)(p->t_first - p->t0) / 1e6;
    p->started = true;
    if (p->tr) { /* the answer changes: its type and length with it */
        const char *type = NULL;
        for (size_t i = 0; i < n; i++)
            if (!strcasecmp(names[i], "Content-Type"))
                type = values[i];
        static const char *const ct[] = {"Content-Type"};
        const char *v[] = {translate_head(p->tr, status, type)};
        front_reply_start(p->client, status, ct, v, 1, false);
        return;
    }
    front_reply_start(p->client, status, keep_n, keep_v, k, has_length);
}

/* What translation made of the answer so far, to the client. */
static void send_translated(struct preq *p)
{
    size_t n = evbuffer_get_length(p->xout);
    if (n)
        front_reply_part(p->client, (const char *)evbuffer_pullup(p->xout, -1), n);
    evbuffer_drain(p->xout, n);
}

static void up_body(void *arg, const char *data, size_t len)
{
    struct preq *p = arg;
    if (p->client && p->tr) {
        if (translate_body(p->tr, data, len, clock_mono_us(), p->xout) < 0) {
            struct front_req *r = p->client;
            front_set_arg(r, NULL);
            p->client = NULL;
            p->status = 502;
            front_abort(r); /* the answer cannot be translated: a broken transfer */
            return;
        }
        send_translated(p);
    } else if (p->client) {
        front_reply_part(p->client, data, len);
    }
    if (p->client && p->up && front_backlogged(p->client))
        relay_pause(p->up, true); /* a client slower than its backend: TCP holds the rest */
}

static void up_done(void *arg)
{
    struct preq *p = arg;
    if (p->client) {
        struct front_req *r = p->client;
        if (p->tr) {
            uint64_t now = clock_mono_us();
            translate_end(p->tr, p->t0, p->t_granted - p->t0, p->t_sent, now, p->xout);
            send_translated(p);
        }
        front_set_arg(r, NULL);
        p->client = NULL;
        front_reply_end(r);
    }
    finish(p, true);
}

static void up_error(void *arg, const char *why)
{
    struct preq *p = arg;
    if (p->client) {
        struct front_req *r = p->client;
        front_set_arg(r, NULL);
        p->client = NULL;
        if (!p->started) {
            char msg[400];
            snprintf(msg, sizeof msg, "%s did not answer (%s)%s", view_of(p->px, p->model).name,
                     why, FOR_ITS_LOG);
            p->status = 502;
            front_error(r, ERRBODY_BACKEND, msg, 0);
        } else { /* mid-answer: cut the client's stream short, so that it sees an error */
            p->status = 502;
            front_abort(r);
        }
    }
    finish(p, false);
}

static const struct relay_ops up_ops = {up_headers, up_body, up_done, up_error};

/* The client's headers for the backend, into kn/kv (HDRS_MAX + 2): its
 * Authorization stops here (it is the proxy's token, or meant for the
 * proxy); the model's api_key goes instead. bearer holds that header. Its
 * Cookie goes without vram's sessions (uikey_strip), into *cookie (the
 * caller frees it). */
static size_t upstream_headers(const struct preq *p, const char **kn, const char **kv, char *bearer,
                               size_t len, char **cookie)
{
    const char *const *names, *const *values;
    size_t n = front_headers(p->client, &names, &values), k = 0;
    for (size_t i = 0; i < n && k < HDRS_MAX; i++)
        if (strlen(names[i]) == 6 && !strcasecmp(names[i], "Cookie")) {
            size_t cl = strlen(values[i]) + 1;
            free(*cookie);
            if ((*cookie = malloc(cl)))
                uikey_strip(values[i], *cookie, cl);
            if (*cookie && **cookie) {
                kn[k] = names[i];
                kv[k++] = *cookie;
            }
        } else if ((strlen(names[i]) != 13 || strcasecmp(names[i], "Authorization")) &&
            /* a translated answer is read here: in plain text, whatever the client takes;
             * and the request is the proxy's JSON, whatever the client called its own
             * (curl -d says a form, which FastAPI's servers, vLLM's, do not read as JSON) */
            (!p->tr ||
             (strcasecmp(names[i], "Accept-Encoding") && strcasecmp(names[i], "Accept") &&
              strcasecmp(names[i], "Content-Type") && strcasecmp(names[i], "Content-Encoding")))) {
            kn[k] = names[i];
            kv[k++] = values[i];
        }
    if (p->tr) {
        kn[k] = "Content-Type";
        kv[k++] = "application/json";
    }
    const char *key = view_of(p->px, p->model).cfg->api_key;
    if (key[0]) {
        snprintf(bearer, len, "Bearer %s", key);
        kn[k] = "Authorization";
        kv[k++] = bearer;
    }
    return k;
}

static void forward(struct preq *p)
{
    struct proxy_model *pm = &p->px->pm[p->model];
    const char *names[HDRS_MAX + 2], *values[HDRS_MAX + 2];
    char bearer[sizeof((struct config_model *)0)->api_key + 8], *cookie = NULL;
    size_t n = upstream_headers(p, names, values, bearer, sizeof bearer, &cookie);
    p->t_sent = clock_mono_us();
    p->up = relay_get(p->px->ops.base, pm->idle, &pm->nidle, view_of(p->px, p->model).port);
    int rc = p->up ? relay_send(p->up, p->tr ? EVHTTP_REQ_POST : p->cmd, p->tr ? p->xuri : p->uri,
                                names, values, n, p->body, &up_ops, p)
                   : -1;
    free(cookie); /* written out by now */
    if (rc == 0)
        return;
    relay_close(p->up);
    p->up = NULL;
    up_error(p, "cannot connect");
}

/* The client left: the backend's connection is closed unread (the backend
 * sees its answer cancelled), the hold given back. Still waiting for the
 * scheduler, its demand is withdrawn: it makes no room for a model nobody
 * waits for, and takes no place in the queue (a client that sends
 * requests and leaves could fill it otherwise). Over the concurrency
 * limit, dispatch finds no client and lets go. */
static void client_closed(void *arg, struct front_req *r, void *req_arg)
{
    struct proxy *px = arg;
    (void)r;
    struct preq *p = req_arg;
    p->client = NULL;
    p->gone = true;
    p->status = 499;
    if (p->demand) {
        uint64_t id = p->demand;
        p->demand = 0;
        px->ops.withdraw(px->ops.d, p->model, id);
        finish(p, false);
        return;
    }
    if (p->up)
        finish(p, false);
}

void proxy_granted(void *arg, unsigned model)
{
    struct preq *p = arg;
    p->demand = 0;
    p->granted = true;
    unwait(p);
    p->t_granted = clock_mono_us();
    p->held0 = p->px->ops.held_ms(p->px->ops.d, model);
    p->px->pm[model].inflight++;
    if (!p->client) {
        finish(p, false);
        return;
    }
    if (p->load_only) { /* Ollama's load (or unload): the model is ready, that is all */
        struct evbuffer *b = evbuffer_new();
        if (b)
            translate_load_reply(p->route, view_of(p->px, model).name,
                                 p->keep_set && p->keep_ms == 0, clock_wall_ms(), b);
        static const char *const ct[] = {"Content-Type"};
        static const char *const json[] = {"application/json"};
        struct front_req *r = p->client;
        front_set_arg(r, NULL);
        p->client = NULL;
        p->status = 200;
        size_t n = b ? evbuffer_get_length(b) : 0;
        front_reply(r, 200, ct, json, 1, n ? (const char *)evbuffer_pullup(b, -1) : "{}",
                    n ? n : 2);
        if (b)
            evbuffer_free(b);
        finish(p, true);
        return;
    }
    forward(p);
}

void proxy_refused(void *arg, unsigned model, enum sched_refusal why, const char *text)
{
    struct preq *p = arg;
    p->demand = 0;
    (void)model;
    bool failed = why == SCHED_REFUSED_FAILED || why == SCHED_REFUSED_RESUME;
    if (p->client) {
        char msg[600];
        snprintf(msg, sizeof msg, "%s%s", text, failed ? FOR_ITS_LOG : "");
        p->status = failed ? 502 : 503;
        front_error(p->client, failed ? ERRBODY_BACKEND : ERRBODY_UNAVAILABLE, msg, failed ? 0 : 5);
        p->client = NULL;
    }
    finish(p, false);
}

/* 503 with Retry-After, for a request that may not wait. */
static void busy(struct preq *p, const char *msg)
{
    struct front_req *r = p->client;
    front_set_arg(r, NULL);
    p->client = NULL;
    p->status = 503;
    front_error(r, ERRBODY_UNAVAILABLE, msg, 1);
    finish(p, false);
}

/* Asks the scheduler for the model, held; or queues over its limit. */
static void admit(struct preq *p)
{
    const struct proxyops *o = &p->px->ops;
    struct proxy_model *pm = &p->px->pm[p->model];
    unsigned limit = view_of(p->px, p->model).cfg->concurrency;
    if (!p->waits && p->px->nwaiting >= o->cfg->max_queue) { /* Ollama's OLLAMA_MAX_QUEUE */
        char msg[120];
        snprintf(msg, sizeof msg, "too many requests waiting (max_queue = %u); try again",
                 o->cfg->max_queue);
        busy(p, msg);
        return;
    }
    if (!p->waits) {
        p->waits = true;
        p->px->nwaiting++;
    }
    if (limit && pm->inflight >= limit) {
        p->next = NULL;
        if (pm->waiting_tail)
            pm->waiting_tail->next = p;
        else
            pm->waiting = p;
        pm->waiting_tail = p;
        return;
    }
    if (!o->demand(o->d, p->model, (uint64_t)(o->cfg->wait_s * 1000), p, &p->demand))
        busy(p, "too many waiting requests; try again");
}

static void dispatch(struct proxy *px, unsigned model)
{
    struct proxy_model *pm = &px->pm[model];
    unsigned limit = view_of(px, model).cfg->concurrency;
    while (pm->waiting && (!limit || pm->inflight < limit)) {
        struct preq *p = pm->waiting;
        pm->waiting = p->next;
        if (!pm->waiting)
            pm->waiting_tail = NULL;
        if (!p->client) {
            p->finished = true; /* never granted: nothing to give back */
            unwait(p);
            ended(p);
            evbuffer_free(p->body);
            free(p);
            continue;
        }
        admit(p);
    }
}

void proxy_forget_model(struct proxy *px, unsigned model)
{
    struct proxy_model *pm = &px->pm[model];
    while (pm->nidle)
        relay_close(pm->idle[--pm->nidle]);
}

void proxy_request_name(const void *req, char *out, size_t len)
{
    const struct preq *p = req;
    static const struct {
        enum evhttp_cmd_type cmd;
        const char *name;
    } methods[] = {{EVHTTP_REQ_GET, "GET"},       {EVHTTP_REQ_POST, "POST"},
                   {EVHTTP_REQ_PUT, "PUT"},       {EVHTTP_REQ_DELETE, "DELETE"},
                   {EVHTTP_REQ_PATCH, "PATCH"},   {EVHTTP_REQ_HEAD, "HEAD"}};
    const char *m = "?";
    for (size_t k = 0; k < sizeof methods / sizeof methods[0]; k++)
        if (methods[k].cmd == p->cmd)
            m = methods[k].name;
    const struct proxyops *o = &p->px->ops;
    snprintf(out, len, "%s %.*s%s%s", m, (int)strcspn(p->uri, "?"), p->uri,
             p->key >= 0 ? ", key " : "", p->key >= 0 ? o->cfg->keys.k[p->key].name : "");
}

unsigned proxy_inflight(const struct proxy *px, unsigned model)
{
    return px ? px->pm[model].inflight : 0;
}

unsigned proxy_waiting(const struct proxy *px, unsigned model)
{
    unsigned n = 0;
    for (const struct preq *p = px ? px->pm[model].waiting : NULL; p; p = p->next)
        n++;
    return n;
}

const struct proxy_stats *proxy_stats(const struct proxy *px, unsigned model)
{
    return px ? &px->pm[model].stats : NULL;
}

double proxy_last_ttfb(const struct proxy *px, unsigned model)
{
    return px ? px->pm[model].last_ttfb_s : 0;
}

/* ---- routing ---- */

/* A keep-alive as Ollama takes it: a duration ("5m", "30s", "0") or a
 * number of seconds; negative is forever. false when it is neither. */
static bool keep_alive_of(json_t *v, uint64_t *ms)
{
    double s;
    if (json_is_number(v)) {
        s = json_number_value(v);
    } else if (json_is_string(v)) {
        const char *t = json_string_value(v);
        if (t[0] == '-') {
            *ms = SCHED_FOREVER;
            return true;
        }
        if (units_parse_seconds(t, &s) < 0)
            return false;
    } else {
        return false;
    }
    *ms = s < 0 ? SCHED_FOREVER : s > 365 * 86400.0 ? SCHED_FOREVER : (uint64_t)(s * 1000);
    return true;
}

/* The model a JSON body names, into name, and its keep_alive if it has
 * one; an error message otherwise. */
static const char *model_of_body(struct evbuffer *body, char *name, size_t len, struct preq *p,
                                 json_t **keep)
{
    size_t n = evbuffer_get_length(body);
    if (!n)
        return "the request has no body: send JSON with a \"model\" field";
    json_error_t je;
    json_t *j = json_loadb((const char *)evbuffer_pullup(body, -1), n, 0, &je);
    const char *why = NULL;
    json_t *m = j ? json_object_get(j, "model") : NULL;
    if (!j)
        why = "the body is not JSON";
    else if (!json_is_string(m) || !*json_string_value(m))
        why = "the body names no model: add \"model\": \"NAME\" (GET /v1/models lists them)";
    else
        snprintf(name, len, "%s", json_string_value(m));
    json_t *k = j ? json_object_get(j, "keep_alive") : NULL;
    if (json_is_null(k))
        k = NULL; /* the default, as Ollama takes it */
    if (!why && k && !keep_alive_of(k, &p->keep_ms))
        why = "keep_alive: a duration (\"5m\", \"0\") or seconds; negative keeps the model "
              "loaded for good";
    else if (!why && k)
        p->keep_set = true;
    if (!why && keep)
        *keep = j;
    else
        json_decref(j);
    return why;
}

/* The body as the model's backend takes it: translated to the API it
 * speaks, or with the model's own name where the client used another (an
 * alias, NAME:latest), or as it came. NULL, or what is wrong (400). */
static const char *shape_body(struct proxy *px, struct preq *p, unsigned model, const char *path,
                              json_t *body, const char *asked)
{
    /* the name its server knows it by: upstream_name (llama-swap's
     * useModelName), else its own */
    struct proxyops_model v = view_of(px, model);
    const char *up = v.cfg->upstream_name;
    const char *own = up[0] ? up : v.name;
    p->route = translate_route(path, v.cfg->api);
    if (p->route == TRANSLATE_NONE) {
        if (!strcmp(asked, own))
            return NULL;
        json_object_set_new(body, "model", json_string(own));
        char *text = json_dumps(body, JSON_COMPACT | RENDER_JSON_REALS);
        if (!text)
            return "out of memory";
        evbuffer_drain(p->body, evbuffer_get_length(p->body));
        evbuffer_add(p->body, text, strlen(text));
        free(text);
        return NULL;
    }
    if (translate_load_only(p->route, body)) {
        p->load_only = true;
        return NULL;
    }
    if (!(p->xout = evbuffer_new()))
        return "out of memory";
    struct evbuffer *out = evbuffer_new();
    if (!out)
        return "out of memory";
    const char *why = translate_request(p->route, body, own, clock_wall_ms(), ++px->answers,
                                        p->xuri, sizeof p->xuri, out, &p->tr);
    if (!why) {
        evbuffer_free(p->body);
        p->body = out;
    } else {
        evbuffer_free(out);
    }
    return why;
}

/* A request for a model, by its route (routes.c): the model named in its
 * JSON body, or in its path (/m/NAME/...). */
static void to_model(void *arg, struct front_req *r, const char *path, const struct route *rt,
                     int key)
{
    struct proxy *px = arg;
    const struct proxyops *o = &px->ops;
    const char *uri = front_uri(r);
    char name[MODELNAME_MAX] = "";
    struct preq *p = calloc(1, sizeof *p);
    json_t *body = NULL; /* a JSON body's, when it names the model */
    if (!p || !(p->body = evbuffer_new())) {
        free(p);
        front_error(r, ERRBODY_INTERNAL, "out of memory", 0);
        return;
    }
    p->px = px;
    p->client = r;
    p->cmd = front_method(r);
    p->key = key;
    p->t0 = clock_mono_us();
    evbuffer_add_buffer(p->body, front_body(r));
    const char *why = NULL;
    char msg[200];
    enum errbody_kind kind = ERRBODY_BAD_REQUEST;
    if (rt->body == ROUTES_BODY_MODEL) {
        why = model_of_body(p->body, name, sizeof name, p, &body);
        wbuf_copy(p->uri, sizeof p->uri, uri, strlen(uri));
    } else { /* /m/NAME/...: the rest of the path is the model's */
        size_t at = strlen(rt->path) - 1;
        const char *slash = modelpath_split(o, path + at, name, sizeof name);
        const char *rest = slash ? uri + (slash - path) : "/";
        wbuf_copy(p->uri, sizeof p->uri, rest, strlen(rest));
    }
    /* the same for clients that cannot add a field (OpenAI's SDKs): a header */
    const char *kh = why ? NULL : front_header(r, "X-Vram-Keep-Alive");
    if (kh) {
        json_t *v = json_string(kh);
        if (v && keep_alive_of(v, &p->keep_ms))
            p->keep_set = true;
        else
            why = "X-Vram-Keep-Alive: a duration (5m, 0) or -1 for good";
        json_decref(v);
    }
    int i = why ? -1 : o->find(o->d, name);
    if (!why && i < 0) {
        snprintf(msg, sizeof msg, "no model '%.100s' here (GET /v1/models lists them)", name);
        why = msg;
        kind = ERRBODY_NO_MODEL;
    }
    if (!why) /* the context it asks for: a discovered model restarts with it */
        why = o->ask_ctx(o->d, (unsigned)i, body, front_header(r, "X-Vram-Num-Ctx"));
    if (!why && body)
        why = shape_body(px, p, (unsigned)i, path, body, name);
    json_decref(body);
    if (why) {
        front_error(r, kind, why, 0);
        evbuffer_free(p->body);
        translate_free(p->tr);
        if (p->xout)
            evbuffer_free(p->xout);
        free(p);
        return;
    }
    p->model = (unsigned)i;
    front_set_arg(r, p);
    admit(p);
}

static void on_request(void *arg, struct front_req *r)
{
    struct proxy *px = arg;
    const struct config *cfg = px->ops.cfg;
    const char *uri = front_uri(r);
    char path[2048];
    const char *q = strchr(uri, '?');
    wbuf_copy(path, sizeof path, uri, q ? (size_t)(q - uri) : strlen(uri));
    const struct route *rt = routes_find(path, strlen(path));
    if (browser_screen(px->browser, cfg->origins, cfg->hosts, r,
                       rt ? rt->browser : BROWSER_READS))
        return;
    const struct keys *ks = &cfg->keys;
    int key = ks->n ? keys_match(ks, front_header(r, "Authorization")) : -1;
    if (ks->n && key < 0 && !(rt && rt->own_key)) {
        front_error(r, ERRBODY_UNAUTHORIZED, "this address wants Authorization: Bearer TOKEN", 0);
        return;
    }
    struct routes_ctx x = {&px->ops, px->ollama, px->panel, px->dash, key, to_model, px};
    routes_answer(&x, rt, r, path);
}

/* The client has taken most of what waited for it: its backend is read again. */
static void client_drained(void *arg, struct front_req *r, void *req_arg)
{
    (void)arg;
    (void)r;
    struct preq *p = req_arg;
    if (p->up)
        relay_pause(p->up, false);
}

/* Before a body is asked for (100 Continue): what browser_screen refuses
 * first is refused without it. */
static bool client_head(void *arg, const struct front_req *r)
{
    const struct proxy *px = arg;
    return browser_head_pass(px->browser, px->ops.cfg->origins, px->ops.cfg->hosts, r,
                           routes_browser(front_uri(r)));
}

static enum errbody_dialect client_dialect(void *arg, const char *uri)
{
    (void)arg;
    return routes_dialect(uri);
}

static const struct front_ops front_ops = {on_request, client_closed, client_drained, client_head,
                                           client_dialect};

int proxy_listen(const struct proxyops *ops, struct proxy **out, char *err, size_t len)
{
    const struct config *cfg = ops->cfg;
    *out = NULL;
    if (!cfg->listen[0])
        return 0;
    char host[96];
    unsigned port;
    if (sscanf(cfg->listen, "%95[^:]:%u", host, &port) != 2 || port > 65535) {
        snprintf(err, len, "listen = %s: HOST:PORT, like 127.0.0.1:11500", cfg->listen);
        return -1;
    }
    struct in_addr a;
    if (!cfg->keys.n && (inet_pton(AF_INET, host, &a) != 1 || (ntohl(a.s_addr) >> 24) != 127))
        log_msg(LOG_LV_WARN,
                "the proxy listens on %s without a token: anyone who can reach it can use "
                "the models (token = ... in [serve])",
                cfg->listen);
    char why[256];
    struct proxy *px = calloc(1, sizeof *px);
    if (!px) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    px->ops = *ops;
    *out = px;
    px->panel = panel_new(&px->ops);
    px->ollama = ollamaroutes_new(&px->ops);
    px->browser = browser_new(host);
    if (!px->panel || !px->ollama || !px->browser) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    struct front_limits lim = {.max_body = cfg->max_body,
                               .timeout_s = cfg->client_timeout_s,
                               .max_conns = fdguard_cap(FDGUARD_PROXY)};
    struct front *f = px->front = front_new(ops->base, &lim, &front_ops, px);
    if (!f) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    if (front_listen(f, host, port, "the proxy", why, sizeof why) < 0) {
        snprintf(err, len, "listen = %s: %s", cfg->listen, why);
        return -1;
    }
    if (dash_listen(&px->ops, host, &px->dash, why, sizeof why) < 0 && cfg->ui[0]) {
        snprintf(err, len, "%s", why);
        return -1;
    }
    if (!cfg->ui[0] && !px->dash)
        log_msg(LOG_LV_WARN, "vram ui cannot open the dashboard: %s", why);
    return 0;
}

void proxy_exiting(struct proxy *px)
{
    if (px)
        dash_exiting(px->dash);
}

const char *proxy_dashboard(const struct proxy *px)
{
    return px ? dash_url(px->dash) : NULL;
}
