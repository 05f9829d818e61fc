/* api: the control API of `vram serve`, HTTP/JSON on a Unix socket (mode
 * 0660): the models and their states, load, unload, suspend, resume,
 * acquire and release, the GPU snapshot, the live event stream, a model's
 * log, /metrics and the dashboard's files (/ui). Every route answers under
 * /vram too (/vram/v1/models...): the proxy hands those requests here
 * (api_serve, in-process, on its client's own connection), where /v1/ on
 * its address belongs to the models. Both addresses are served by
 * http/front.c. It owns the requests it keeps waiting: those for the
 * scheduler (load, acquire: demands, answered through demand.h) and those
 * for a model to reach a state (suspend, resume), answered as states
 * change. */
#include "daemon/api.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <grp.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "app/log.h"
#include "app/render_json.h"
#include "core/schedwhen.h"
#include "core/units.h"
#include "daemon/discover.h"
#include "daemon/events.h"
#include "daemon/disktier.h"
#include "daemon/hostpool.h"
#include "daemon/loopwatch.h"
#include "http/fdguard.h"
#include "http/front.h"
#include "daemon/evictwhy.h"
#include "daemon/logtail.h"
#include "daemon/metrics.h"
#include "daemon/names.h"
#include "proxy/browser.h"
#include "proxy/proxy.h"
#include "daemon/super.h"
#include "daemon/webui.h"

#define MAX_BODY         (64 * 1024)
#define DEFAULT_WAIT_MS  (5 * 60 * 1000)
#define DEFAULT_LEASE_MS (10 * 60 * 1000)
#define MAX_WAITS        512

/* A request kept waiting: for a demand's answer, or for a state. */
struct wait {
    bool used;
    struct api *api;
    struct front_req *req; /* NULL: the client left */
    bool for_state;
    unsigned model;
    enum sched_state want; /* for_state: answer when the model gets here */
    uint64_t deadline_ms;  /* for_state: when to give up */
    uint64_t lease_ms;     /* a demand: an acquire, held this long */
};

struct api {
    struct daemon *d;
    struct front *ctl, *metrics; /* each capped at its own share of the descriptors */
    struct browser *mbrowser;    /* the metrics address's rules for browsers: Host, Origin */
    struct logtail *logtail;
    struct wait waits[MAX_WAITS];
    size_t nwaits; /* slots at or past this are unused: scans stop here (twice a proxied request) */
    dev_t sock_dev; /* the socket file this daemon made, removed at exit only if still it */
    ino_t sock_ino;
};

static void reply_json(struct front_req *req, int code, json_t *body)
{
    static const char *const name[] = {"Content-Type"}, *const type[] = {"application/json"};
    static const char nomem[] = "{\"error\":\"out of memory\"}\n";
    char *text = body ? json_dumps(body, JSON_COMPACT | RENDER_JSON_REALS) : NULL;
    size_t n = text ? strlen(text) : 0;
    char *line = text ? realloc(text, n + 2) : NULL;
    if (line) {
        line[n] = '\n';
        front_reply(req, code, name, type, 1, line, n + 1);
    } else {
        front_reply(req, 500, name, type, 1, nomem, sizeof nomem - 1);
    }
    free(line ? line : text);
    json_decref(body);
}

static void reply_error(struct front_req *req, int code, const char *msg)
{
    reply_json(req, code, json_pack("{s:s}", "error", msg));
}

/* How the model is (or would be) suspended: what the last suspend did,
 * else what its configuration asks for. */
static const char *swap_path(const struct dmodel *dm)
{
    if (dm->cfg.evict != SCHED_EVICT_SUSPEND)
        return "stop";
    if (dm->how[0])
        return dm->how;
    return dm->cfg.fast ? "fast" : "checkpoint";
}

/* An error of model i's, with its log's last line: for the socket's
 * people only (the proxy's clients get vram's words alone: proxy.c). */
static const char *with_log(const struct daemon *d, unsigned i, const char *text, char *out,
                            size_t len)
{
    char last[200];
    super_last_log(d->cfg.logs, d->smodels[i].name, last, sizeof last);
    snprintf(out, len, "%s%s%s", text, last[0] ? "; log: " : "", last);
    return out;
}

json_t *api_model_json(const struct daemon *d, unsigned i)
{
    const struct sched_model *m = &d->smodels[i];
    const struct dmodel *dm = &d->dm[i];
    char error[sizeof m->error + 220];
    if (m->error[0])
        with_log(d, i, m->error, error, sizeof error);
    else
        error[0] = '\0';
    bool on = m->state != SCHED_STOPPED && m->state != SCHED_FAILED && m->state != SCHED_SUSPENDED;
    /* suspended, its processes may still hold memory there (fast swap
     * leaves the CUDA context behind): what they hold, as the driver says */
    uint64_t left = m->state == SCHED_SUSPENDED && dm->pid > 0 && d->snap.taken_ms > dm->out_wall_ms
                        ? daemon_measure(d, i, NULL) /* a look at the driver since it went out */
                        : 0;
    int gpu = on ? m->gpu : left ? dm->left_gpu : -1;
    json_t *j = json_pack(
        "{s:s, s:s, s:o, s:o, s:o, s:I, s:I, s:o, s:i, s:o, s:s, s:s, s:i, s:i, s:i, s:f, s:f, "
        "s:f}",
        "name", m->name, "state", sched_state_name(m->state), "gpu",
        gpu >= 0 ? json_integer(gpu) : json_null(), "pid",
        dm->pid > 0 ? json_integer(dm->pid) : json_null(), "port",
        dm->pid > 0 ? json_integer(dm->port) : json_null(), "vram_bytes",
        (json_int_t)(on ? m->need : left), "host_bytes",
        (json_int_t)(m->state == SCHED_SUSPENDED ? m->host_bytes : 0), "last_used_ms",
        m->last_used_ms ? json_integer((json_int_t)daemon_wall_ms(m->last_used_ms)) : json_null(),
        "restarts",
        (int)dm->restarts, "suspended_by", dm->how[0] ? json_string(dm->how) : json_null(), "swap",
        swap_path(dm), "error", error, "holds", (int)m->holds, "suspends", (int)dm->suspends,
        "resumes", (int)dm->resumes, "last_start_s", dm->last_start_s, "last_suspend_s",
        dm->last_suspend_s, "last_resume_s", dm->last_resume_s);
    if (!j)
        return NULL;
    uint64_t until = schedwhen_expires(&d->sched, i);
    json_object_set_new(j, "keep_alive_ms",
                        m->keep_alive_ms == SCHED_FOREVER
                            ? json_null()
                            : json_integer((json_int_t)m->keep_alive_ms));
    json_object_set_new(j, "expires_ms",
                        until && until != SCHED_FOREVER
                            ? json_integer((json_int_t)daemon_wall_ms(until))
                            : json_null());
    json_object_set_new(j, "inflight", json_integer(proxy_inflight(d->proxy, i)));
    json_object_set_new(j, "preemptions", json_integer(m->preemptions));
    json_t *gpus = json_array();
    for (int g = 0; on && g < SCHED_MAX_GPUS; g++)
        if (m->gpus & (1u << g))
            json_array_append_new(gpus, json_integer(g));
    json_object_set_new(j, "gpus", gpus);
    json_object_set_new(j, "held_s", json_real((double)daemon_held_ms(d, i) / 1000));
    json_object_set_new(j, "host_pool_bytes",
                        json_integer(d->pool ? (json_int_t)hostpool_given(d->pool, i) : 0));
    /* where its memory is: the GPU, host RAM, the disk tier, or both of
     * those two (a suspend that host memory could hold only part of) */
    uint64_t disk = m->state == SCHED_SUSPENDED ? disktier_held(d->disk, i) : 0;
    uint64_t host = m->state == SCHED_SUSPENDED && m->host_bytes > disk ? m->host_bytes - disk : 0;
    json_object_set_new(j, "host_bytes", json_integer((json_int_t)host));
    json_object_set_new(j, "disk_bytes", json_integer((json_int_t)disk));
    json_object_set_new(j, "tier", on                   ? json_string("gpu")
                                   : m->state != SCHED_SUSPENDED ? json_null()
                                   : disk && host       ? json_string("host+disk")
                                   : disk               ? json_string("disk")
                                                        : json_string("host"));
    /* a discovered model: its store, what it was last started with */
    const struct discover_run *run = d->disc ? &d->disc->run[i] : NULL;
    bool ran = dm->cfg.source[0] && run && run->ctx;
    json_object_set_new(j, "source", dm->cfg.source[0] ? json_string(dm->cfg.source) : json_null());
    json_object_set_new(j, "ctx", ran ? json_integer(run->ctx) : json_null());
    json_object_set_new(j, "ngl", ran ? json_integer(run->ngl) : json_null());
    json_object_set_new(j, "layers", ran ? json_integer(run->layers) : json_null());
    json_object_set_new(j, "last_ttfb_s", json_real(proxy_last_ttfb(d->proxy, i)));
    /* why it last went out, when the scheduler chose it (evictwhy.h) */
    json_t *out = evictwhy_json(d, i);
    json_object_set_new(j, "evicted", out ? out : json_null());
    return j;
}

json_t *api_models_json(const struct daemon *d)
{
    json_t *a = json_array();
    for (size_t i = 0; i < d->sched.nmodels; i++)
        if (!d->dm[i].removed)
            json_array_append_new(a, api_model_json(d, (unsigned)i));
    json_t *j = json_pack("{s:o}", "models", a);
    /* the loop's lateness and fast swap's host memory, daemon-wide */
    const struct loopwatch_stats *lw = loopwatch_stats();
    json_object_set_new(j, "loop",
                        json_pack("{s:I, s:I, s:I, s:s?}", "beats", (json_int_t)lw->lag.count,
                                  "late_max_ms", (json_int_t)lw->max_ms, "late_over_100ms",
                                  (json_int_t)lw->late, "worst",
                                  lw->worst_what[0] ? lw->worst_what : NULL));
    if (d->pool) {
        struct hostpool_stats st;
        hostpool_stats(d->pool, &st);
        json_object_set_new(j, "host_pool",
                            json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "limit_bytes",
                                      (json_int_t)st.limit, "chunk_bytes", (json_int_t)st.chunk,
                                      "held_bytes", (json_int_t)st.given,
                                      "spare_bytes", (json_int_t)st.spare, "filling_bytes",
                                      (json_int_t)st.filling, "freeing_bytes",
                                      (json_int_t)st.freeing, "made_bytes", (json_int_t)st.made,
                                      "freed_bytes", (json_int_t)st.freed));
        json_object_set_new(json_object_get(j, "host_pool"), "charged_bytes",
                            json_integer((json_int_t)st.charged));
    }
    if (d->disk)
        json_object_set_new(j, "disk",
                            json_pack("{s:s, s:I, s:I}", "dir", disktier_dir(d->disk),
                                      "budget_bytes", (json_int_t)disktier_budget(d->disk),
                                      "used_bytes", (json_int_t)disktier_used(d->disk)));
    return j;
}

/* ---- waiting requests ---- */

/* A client that leaves while waiting: its answer has nowhere to go, and a
 * hold granted to it later is given back at once. One that leaves a
 * stream (the events, a followed log) is dropped from it. */
static void client_left(void *arg, struct front_req *r, void *req_arg)
{
    struct api *api = arg;
    (void)req_arg;
    for (size_t k = 0; k < api->nwaits; k++)
        if (api->waits[k].used && api->waits[k].req == r) {
            api->waits[k].req = NULL;
            return;
        }
    if (!events_closed(api->d->events, r))
        logtail_closed(api->logtail, r);
}

static struct wait *wait_new(struct api *api, struct front_req *req, unsigned model)
{
    for (size_t k = 0; k < MAX_WAITS; k++) {
        struct wait *w = &api->waits[k];
        if (w->used)
            continue;
        memset(w, 0, sizeof *w);
        w->used = true;
        w->api = api;
        if (k >= api->nwaits)
            api->nwaits = k + 1;
        w->req = req;
        w->model = model;
        front_set_arg(req, w);
        return w;
    }
    reply_error(req, 503, "too many waiting requests; try again");
    return NULL;
}

struct lease {
    struct daemon *d;
    unsigned model;
    struct event *ev;
};

static void lease_over(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct lease *l = arg;
    struct daemon *d = l->d;
    unsigned model = l->model;
    event_free(l->ev);
    free(l);
    daemon_release(d, model);
}

static void granted(void *arg, unsigned model)
{
    struct wait *w = arg;
    struct daemon *d = w->api->d;
    w->used = false;
    if (!w->req) {
        if (w->lease_ms)
            daemon_release(d, model);
        return;
    }
    if (w->lease_ms) { /* an acquire: released by the client or when the lease ends */
        struct lease *l = calloc(1, sizeof *l);
        if (l) {
            l->d = d;
            l->model = model;
            l->ev = evtimer_new(d->base, lease_over, l);
            struct timeval tv = {(time_t)(w->lease_ms / 1000),
                                 (suseconds_t)(w->lease_ms % 1000) * 1000};
            evtimer_add(l->ev, &tv);
        }
    }
    reply_json(w->req, 200, api_model_json(d, model));
}

static void refused(void *arg, unsigned model, enum sched_refusal why, const char *text)
{
    struct wait *w = arg;
    w->used = false;
    if (!w->req)
        return;
    bool failed = why == SCHED_REFUSED_FAILED || why == SCHED_REFUSED_RESUME;
    char msg[800];
    reply_error(w->req, failed ? 502 : 503,
                failed ? with_log(w->api->d, model, text, msg, sizeof msg) : text);
}

static const struct demand_ops demand_ops = {granted, refused};

void api_states_changed(struct api *api, uint64_t now)
{
    const struct daemon *d = api->d;
    while (api->nwaits && !api->waits[api->nwaits - 1].used)
        api->nwaits--;
    for (size_t k = 0; k < api->nwaits; k++) {
        struct wait *w = &api->waits[k];
        if (!w->used || !w->for_state)
            continue;
        const struct sched_model *m = &d->smodels[w->model];
        if (!w->req) {
            w->used = false;
        } else if (now >= w->deadline_ms) {
            char msg[200];
            snprintf(msg, sizeof msg, "%s is still %s: gave up waiting", m->name,
                     sched_state_name(m->state));
            reply_error(w->req, 504, msg);
            w->used = false;
        } else if (m->state == w->want) {
            reply_json(w->req, 200, api_model_json(d, w->model));
            w->used = false;
        } else if ((w->want == SCHED_READY && m->state == SCHED_SUSPENDED && m->error[0]) ||
                   (w->want == SCHED_SUSPENDED &&
                    (m->state == SCHED_STOPPING || m->state == SCHED_STOPPED))) {
            reply_error(w->req, 500, m->error[0] ? m->error : "it stopped instead");
            w->used = false;
        }
    }
}

/* ---- requests ---- */

/* The request's JSON body: NULL (and a 400 sent) when malformed. */
static json_t *body_of(struct front_req *req, bool *bad)
{
    struct evbuffer *in = front_body(req);
    size_t n = evbuffer_get_length(in);
    *bad = false;
    if (!n)
        return json_object();
    char *text = malloc(n + 1);
    if (!text) {
        *bad = true;
        reply_error(req, 500, "out of memory");
        return NULL;
    }
    evbuffer_remove(in, text, n);
    text[n] = '\0';
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    free(text);
    if (!j || !json_is_object(j)) {
        char msg[300];
        snprintf(msg, sizeof msg, "the body is not a JSON object: %s (line %d, column %d)",
                 j ? "another JSON value" : je.text, je.line, je.column);
        json_decref(j);
        *bad = true;
        reply_error(req, 400, msg);
        return NULL;
    }
    return j;
}

/* A duration field ("30s", or a number of seconds), def when absent. */
static int duration_ms(json_t *body, const char *key, uint64_t def, uint64_t *out)
{
    json_t *v = json_object_get(body, key);
    double s;
    *out = def;
    if (!v)
        return 0;
    if (json_is_number(v))
        s = json_number_value(v);
    else if (!json_is_string(v) || units_parse_seconds(json_string_value(v), &s) < 0)
        return -1;
    if (s < 0 || s > 7 * 86400)
        return -1;
    *out = (uint64_t)(s * 1000);
    return 0;
}

static void model_verb(struct api *api, struct front_req *req, unsigned i, const char *verb)
{
    struct daemon *d = api->d;
    bool bad;
    json_t *body = body_of(req, &bad);
    if (bad)
        return;
    struct sched_model *m = &d->smodels[i];
    uint64_t wait, lease;
    if (duration_ms(body, "timeout", DEFAULT_WAIT_MS, &wait) < 0 ||
        duration_ms(body, "lease", DEFAULT_LEASE_MS, &lease) < 0) {
        json_decref(body);
        reply_error(req, 400, "timeout and lease: durations like \"30s\"");
        return;
    }
    json_t *gpu = json_object_get(body, "gpu");
    int g = -1;
    if (gpu && (!json_is_integer(gpu) || json_integer_value(gpu) < 0 ||
                (size_t)json_integer_value(gpu) >= d->sched.ngpus)) {
        json_decref(body);
        reply_error(req, 400, "gpu: the index of one of this machine's GPUs");
        return;
    }
    if (gpu)
        g = (int)json_integer_value(gpu);
    json_decref(body);
    uint64_t now = daemon_now_ms();
    if (!strcmp(verb, "load") || !strcmp(verb, "acquire")) {
        bool hold = !strcmp(verb, "acquire");
        struct wait *w = wait_new(api, req, i);
        if (!w)
            return;
        w->lease_ms = hold ? lease : 0;
        if (!daemon_demand(d, i, hold, wait, &demand_ops, w, NULL,
                           hold ? "POST /v1/models/NAME/acquire" : "vram load")) {
            w->used = false;
            reply_error(req, 503, "too many waiting requests; try again");
        }
    } else if (!strcmp(verb, "release")) {
        if (!m->holds) {
            reply_error(req, 409, "not acquired: nothing to release");
            return;
        }
        daemon_release(d, i);
        reply_json(req, 200, api_model_json(d, i));
    } else if (!strcmp(verb, "unload")) {
        struct sched_event e = {.kind = SCHED_EV_UNLOAD, .model = i};
        daemon_step(d, &e);
        reply_json(req, 202, api_model_json(d, i));
    } else if (!strcmp(verb, "suspend")) {
        if (m->state == SCHED_SUSPENDED) {
            reply_json(req, 200, api_model_json(d, i));
            return;
        }
        if (m->state != SCHED_READY || m->holds) {
            char msg[160];
            snprintf(msg, sizeof msg, "%s is %s: only a ready, idle model can be suspended",
                     m->name, sched_state_name(m->state));
            reply_error(req, 409, msg);
            return;
        }
        struct wait *w = wait_new(api, req, i);
        if (!w)
            return;
        w->for_state = true;
        w->want = SCHED_SUSPENDED;
        w->deadline_ms = now + wait;
        struct sched_event e = {.kind = SCHED_EV_SUSPEND, .model = i};
        daemon_step(d, &e);
    } else if (!strcmp(verb, "resume")) {
        if (m->state != SCHED_SUSPENDED) {
            char msg[160];
            snprintf(msg, sizeof msg, "%s is %s, not suspended", m->name,
                     sched_state_name(m->state));
            reply_error(req, 409, msg);
            return;
        }
        m->error[0] = '\0';
        struct wait *w = wait_new(api, req, i);
        if (!w)
            return;
        w->for_state = true;
        w->want = SCHED_READY;
        w->deadline_ms = now + wait;
        struct sched_event e = {.kind = SCHED_EV_RESUME, .model = i, .gpu = g};
        daemon_step(d, &e);
    } else {
        reply_error(req, 404, "unknown action: load, unload, acquire, release, suspend or resume");
    }
}

static void send_metrics(const struct daemon *d, struct front_req *req)
{
    static const char *const name[] = {"Content-Type"};
    static const char *const type[] = {"text/plain; version=0.0.4; charset=utf-8"};
    char *text = metrics_render(d);
    if (!text)
        reply_error(req, 500, "out of memory");
    else
        front_reply(req, 200, name, type, 1, text, strlen(text));
    free(text);
}

/* GET /v1/models/NAME/log?lines=N&follow=1 */
static void model_log(struct api *api, struct front_req *req, const struct evhttp_uri *u,
                      unsigned i)
{
    struct daemon *d = api->d;
    const char *name = d->smodels[i].name;
    struct evkeyvalq q = {0};
    evhttp_parse_query_str(evhttp_uri_get_query(u) ? evhttp_uri_get_query(u) : "", &q);
    const char *lines = evhttp_find_header(&q, "lines");
    const char *follow = evhttp_find_header(&q, "follow");
    char path[1024];
    super_log_path(d->cfg.logs, name, path, sizeof path);
    logtail_serve(api->logtail, req, path, lines ? (unsigned)strtoul(lines, NULL, 10) : 100,
                  follow && strcmp(follow, "0"));
    evhttp_clear_headers(&q);
}

/* The model rest[0..n) names, percent-decoded ("Qwen%2FQwen2.5-7B"), by
 * its name, an alias or NAME:latest; -1. A %00 names nothing. */
static int model_at(const struct daemon *d, const char *rest, size_t n)
{
    char raw[MODELNAME_MAX * 3 + 1];
    if (!n || n >= sizeof raw)
        return -1;
    memcpy(raw, rest, n);
    raw[n] = '\0';
    size_t len = 0;
    char *name = evhttp_uridecode(raw, 0, &len);
    int i = name && len == strlen(name) ? names_find(d, name) : -1;
    free(name);
    return i;
}

/* /v1/models/REST: GET NAME, GET NAME/log, POST NAME/VERB. NAME is one
 * segment, '/' in it as %2F (what vram's CLI and the dashboard send);
 * a name whose '/' came unescaped is found too, the verb being the last
 * segment (docs/serve.md, Names). */
static void model_route(struct api *api, struct front_req *req, const struct evhttp_uri *u,
                        const char *rest, bool post)
{
    struct daemon *d = api->d;
    const char *slash = strrchr(rest, '/');
    int i = -1;
    if (post || (slash && !strcmp(slash, "/log"))) {
        i = slash ? model_at(d, rest, (size_t)(slash - rest)) : -1;
        if (i >= 0 && post) {
            model_verb(api, req, (unsigned)i, slash + 1);
            return;
        }
        if (i >= 0) {
            model_log(api, req, u, (unsigned)i);
            return;
        }
    }
    if (!post && (i = model_at(d, rest, strlen(rest))) >= 0) {
        reply_json(req, 200, api_model_json(d, (unsigned)i));
        return;
    }
    bool log = slash && !strcmp(slash, "/log"); /* the name is before it */
    size_t n = (post || log) && slash ? (size_t)(slash - rest) : strlen(rest);
    char msg[300];
    snprintf(msg, sizeof msg, "no model '%.*s' in the configuration (GET /v1/models)",
             (int)(n > 150 ? 150 : n), rest);
    reply_error(req, 404, msg);
}

static void on_request(void *arg, struct front_req *req);

/* A body is asked for (100 Continue) only of a request the rules for
 * browsers let through. */
static bool ctl_head(void *arg, const struct front_req *req)
{
    (void)arg;
    return !webui_refused(req, false);
}

static const struct front_ops ctl_ops = {on_request, client_left, NULL, ctl_head};

void api_serve(struct api *api, struct front_req *req, bool passed)
{
    loopwatch_begin("a control API request");
    struct daemon *d = api->d;
    struct evhttp_uri *u = evhttp_uri_parse(front_uri(req));
    const char *path = u ? evhttp_uri_get_path(u) : NULL;
    enum evhttp_cmd_type cmd = front_method(req);
    const char *refused = webui_refused(req, passed);
    front_set_ops(req, &ctl_ops, api); /* its client's leaving is told here */
    if (path && !strncmp(path, "/vram/", 6))
        path += 5;
    if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_POST) {
        reply_error(req, 501, "the control API answers GET and POST only");
    } else if (evbuffer_get_length(front_body(req)) > MAX_BODY) {
        /* the socket's own limit; the proxy's address takes larger bodies for the models */
        reply_error(req, 413, "the body is larger than the control API takes (64 KiB)");
    } else if (!path) {
        reply_error(req, 400, "unreadable URI");
    } else if (refused) {
        reply_error(req, 403, refused);
    } else if (cmd == EVHTTP_REQ_GET && webui_serve(req, path)) {
        /* the dashboard's files */
    } else if (!strcmp(path, "/v1/models") && cmd == EVHTTP_REQ_GET) {
        reply_json(req, 200, api_models_json(d));
    } else if (!strcmp(path, "/v1/snapshot") && cmd == EVHTTP_REQ_GET) {
        reply_json(req, 200, render_json(&d->snap));
    } else if (!strcmp(path, "/metrics") && cmd == EVHTTP_REQ_GET) {
        send_metrics(d, req);
    } else if (!strcmp(path, "/v1/events") && cmd == EVHTTP_REQ_GET) {
        struct evkeyvalq q = {0};
        evhttp_parse_query_str(evhttp_uri_get_query(u) ? evhttp_uri_get_query(u) : "", &q);
        const char *live = evhttp_find_header(&q, "snapshot");
        const char *history = evhttp_find_header(&q, "history");
        if (!events_listen(d->events, req, history ? (unsigned)strtoul(history, NULL, 10) : 0,
                           live && strcmp(live, "0")))
            reply_error(req, 503, "too many event listeners");
        evhttp_clear_headers(&q);
    } else if (!strncmp(path, "/v1/models/", 11) && path[11] &&
               (cmd == EVHTTP_REQ_GET || cmd == EVHTTP_REQ_POST)) {
        model_route(api, req, u, path + 11, cmd == EVHTTP_REQ_POST);
    } else {
        reply_error(req, 404,
                    "GET /v1/models, /v1/models/NAME, /v1/models/NAME/log, /v1/snapshot, "
                    "/v1/events, /metrics, /ui; "
                    "POST /v1/models/NAME/{load,unload,acquire,release,suspend,resume}");
    }
    if (u)
        evhttp_uri_free(u);
    loopwatch_end();
}

static void on_request(void *arg, struct front_req *req)
{
    api_serve(arg, req, false);
}

/* The metrics = HOST:PORT listener: /metrics and nothing else, since it
 * asks nobody for a token; to a browser only by a name of the address and
 * from no page elsewhere, as the proxy's (model names and states are not
 * for a page that pointed a name of its own here: DNS rebinding). */
static bool metrics_head(void *arg, const struct front_req *req)
{
    const struct api *api = arg;
    return browser_head_ok(api->mbrowser, api->d->cfg.origins, api->d->cfg.hosts, req);
}

static void on_metrics_request(void *arg, struct front_req *req)
{
    struct api *api = arg;
    const char *uri = front_uri(req);
    size_t n = strcspn(uri, "?");
    if (!metrics_head(api, req))
        reply_error(req, 403,
                    "a browser reaches the metrics address only by a name of it (hosts = in "
                    "[serve]) and from no page elsewhere (origins =)");
    else if (front_method(req) == EVHTTP_REQ_GET && n == 8 && !strncmp(uri, "/metrics", 8))
        send_metrics(api->d, req);
    else
        reply_error(req, 404, "this address serves GET /metrics only");
}

static const struct front_ops metrics_ops = {on_metrics_request, client_left, NULL, metrics_head};

void api_remove_socket(struct api *api)
{
    struct stat st;
    if (api && api->sock_ino && lstat(api->d->cfg.socket, &st) == 0 && S_ISSOCK(st.st_mode) &&
        st.st_dev == api->sock_dev && st.st_ino == api->sock_ino)
        unlink(api->d->cfg.socket);
}

bool api_other_answers(const char *socket_path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof a.sun_path)
        return false;
    memcpy(a.sun_path, socket_path, strlen(socket_path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    bool yes = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    if (fd >= 0)
        close(fd);
    return yes;
}

int api_listen(struct daemon *d, struct api **out, char *err, size_t len)
{
    struct api *api = calloc(1, sizeof *api);
    if (!api) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    api->d = d;
    *out = api;
    /* bodies are JSON of a few fields; 60 s for a request to arrive, or
     * idle between two */
    struct front_limits lim = {
        .max_body = MAX_BODY, .timeout_s = 60, .max_conns = fdguard_cap(FDGUARD_CONTROL)};
    api->ctl = front_new(d->base, &lim, &ctl_ops, api);
    api->logtail = logtail_new(d->base);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    const char *why = fd < 0 ? strerror(errno) : "path too long";
    if (!api->ctl || !api->logtail)
        why = "out of memory";
    if (!api->ctl || !api->logtail || fd < 0 || strlen(d->cfg.socket) >= sizeof a.sun_path) {
        snprintf(err, len, "socket %s: %s", d->cfg.socket, why);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    memcpy(a.sun_path, d->cfg.socket, strlen(d->cfg.socket) + 1);
    /* a socket file left by a daemon that died: take it over, unless one answers there */
    if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
        snprintf(err, len, "%s: another vram serve answers there already", d->cfg.socket);
        close(fd);
        return -1;
    }
    close(fd);
    /* only ever a socket of ours is taken over; anything else stays */
    if (config_check_socket(&d->cfg, err, len) < 0)
        return -1;
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    unlink(d->cfg.socket);
    mode_t old = umask(0117);
    int rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    umask(old);
    struct stat st;
    if (rc == 0 && lstat(d->cfg.socket, &st) == 0) {
        api->sock_dev = st.st_dev;
        api->sock_ino = st.st_ino;
    }
    struct group *grp = rc == 0 ? getgrnam("vram") : NULL;
    if (grp && chown(d->cfg.socket, (uid_t)-1, grp->gr_gid) < 0)
        log_msg(LOG_LV_WARN, "cannot give %s to group vram: %s", d->cfg.socket, strerror(errno));
    if (rc < 0 || listen(fd, 128) < 0) {
        snprintf(err, len,
                 "cannot listen on %s: %s (does its directory exist, and may vram "
                 "write there?)",
                 d->cfg.socket, strerror(errno));
        close(fd);
        return -1;
    }
    char msg[256];
    if (front_listen_fd(api->ctl, fd, "the control socket", msg, sizeof msg) < 0) {
        snprintf(err, len, "%s: %s", d->cfg.socket, msg);
        return -1;
    }
    if (d->cfg.metrics[0]) {
        char host[96];
        unsigned port;
        lim.max_conns = fdguard_cap(FDGUARD_METRICS);
        api->metrics = front_new(d->base, &lim, &metrics_ops, api);
        if (sscanf(d->cfg.metrics, "%95[^:]:%u", host, &port) != 2 || port > 65535 ||
            !api->metrics || !(api->mbrowser = browser_new(host)) ||
            front_listen(api->metrics, host, port, "the metrics address", msg, sizeof msg) < 0) {
            snprintf(err, len, "metrics = %s: cannot listen there (HOST:PORT, free)",
                     d->cfg.metrics);
            return -1;
        }
    }
    return 0;
}
