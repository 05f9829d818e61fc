/* The proxy (proxy/proxy.c) driven through a fake daemon: its table of
 * operations (proxy/proxyops.h) filled here, as daemon/toproxy.c fills it
 * for real. Real sockets on loopback and the test's own loop: clients
 * that write HTTP by hand, and a backend of a few lines (libevent's
 * evhttp). The loop is turned until what a case waits for happens, never
 * for a while: a case that waits in vain fails at a deadline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy/proxy.h"
#include "proxy/proxyops.h"
#include "calllog.h"

#define NMODELS 1

static struct event_base *base;
static struct config cfg; /* large: [serve]'s settings and the models' */
static struct proxy *px;
static unsigned proxy_port, backend_port;
static char dir[64];

/* ---- the fake daemon ---- */

static enum sched_state state[NMODELS];
static char calls[1024]; /* what the proxy asked, in order: "demand m0; release m0" */
static unsigned asked;   /* operations called, reads included */
static uint64_t last_id;
struct waiter {
    void *req;
    uint64_t id;
};
static struct waiter waiting[8]; /* demands not answered yet */
static unsigned nwaiting;

#define say(...) calllog_say(calls, sizeof calls, __VA_ARGS__)

static unsigned count(void *d)
{
    (void)d;
    asked++;
    return NMODELS;
}

static bool model(void *d, unsigned i, struct proxyops_model *out)
{
    (void)d;
    asked++;
    if (i >= NMODELS)
        return false;
    *out = (struct proxyops_model){.name = cfg.models[i].name, .cfg = &cfg.models[i],
                                   .state = state[i], .port = backend_port, .size = 1 << 30};
    return true;
}

/* "m0", and its alias "fast" */
static int find(void *d, const char *name)
{
    (void)d;
    asked++;
    return !strcmp(name, "m0") || !strcmp(name, "fast") ? 0 : -1;
}

/* A ready model is granted at once, before demand returns, as the
 * scheduler may; any other waits for the case to answer it. */
static uint64_t demand(void *d, unsigned m, uint64_t wait_ms, void *req, uint64_t *idp)
{
    (void)d;
    (void)wait_ms;
    asked++;
    say("demand m%u", m);
    *idp = ++last_id;
    if (state[m] == SCHED_READY)
        proxy_granted(req, m);
    else
        waiting[nwaiting++] = (struct waiter){req, last_id};
    return last_id;
}

static void withdraw(void *d, unsigned m, uint64_t id)
{
    (void)d;
    asked++;
    say("withdraw m%u #%llu", m, (unsigned long long)id);
    for (unsigned k = 0; k < nwaiting; k++)
        if (waiting[k].id == id) {
            waiting[k] = waiting[--nwaiting];
            return;
        }
    fail_msg("withdrew demand #%llu, which does not wait", (unsigned long long)id);
}

static void release(void *d, unsigned m, bool keep_set, uint64_t keep_ms)
{
    (void)d, (void)keep_set, (void)keep_ms;
    asked++;
    say("release m%u", m);
}

static uint64_t held_ms(void *d, unsigned m)
{
    (void)d, (void)m;
    asked++;
    return 0;
}

static const char *ask_ctx(void *d, unsigned m, const json_t *body, const char *header)
{
    (void)d, (void)m, (void)body, (void)header;
    asked++;
    return NULL;
}

static uint64_t expires_wall_ms(void *d, unsigned m)
{
    (void)d, (void)m;
    asked++;
    return SCHED_FOREVER;
}

static void control(void *d, struct front_req *r)
{
    (void)d, (void)r;
    fail_msg("no case asks the control API");
}

/* The scheduler's answer to every demand that waits. */
static void grant_all(unsigned m)
{
    state[m] = SCHED_READY;
    while (nwaiting)
        proxy_granted(waiting[--nwaiting].req, m);
}

static void refuse_all(unsigned m, enum sched_refusal why, const char *text)
{
    state[m] = SCHED_FAILED;
    while (nwaiting)
        proxy_refused(waiting[--nwaiting].req, m, why, text);
}

/* ---- the backend: what it was asked, and one answer ---- */

static unsigned backend_seen;
static char backend_uri[256], backend_auth[128], backend_body[1024];

static void on_backend(struct evhttp_request *req, void *arg)
{
    (void)arg;
    backend_seen++;
    snprintf(backend_uri, sizeof backend_uri, "%s", evhttp_request_get_uri(req));
    const char *auth = evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
    snprintf(backend_auth, sizeof backend_auth, "%s", auth ? auth : "");
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t n = evbuffer_get_length(in);
    n = n < sizeof backend_body - 1 ? n : sizeof backend_body - 1;
    evbuffer_remove(in, backend_body, n);
    backend_body[n] = '\0';
    struct evbuffer *out = evbuffer_new();
    evbuffer_add_printf(out, "{\"object\":\"chat.completion\",\"choices\":[{\"index\":0,"
                             "\"message\":{\"role\":\"assistant\",\"content\":\"hello from "
                             "the backend\"}}]}");
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
    evhttp_send_reply(req, 200, "OK", out);
    evbuffer_free(out);
}

/* ---- clients, and the loop turned until something happens ---- */

struct client {
    int fd;
    struct event *ev;
    char got[16384];
    size_t n;
    bool ended; /* the proxy closed the connection: its answer is whole */
};

static void client_read(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    struct client *c = arg;
    ssize_t k = recv(fd, c->got + c->n, sizeof c->got - 1 - c->n, 0);
    if (k > 0) {
        c->n += (size_t)k;
        c->got[c->n] = '\0';
    } else if (k == 0 || (errno != EAGAIN && errno != EINTR)) {
        c->ended = true;
        event_del(c->ev);
    }
}

/* A request to the proxy, sent whole (Connection: close: the proxy closes
 * once it has answered). */
static struct client *ask(const char *path, const char *headers, const char *body)
{
    struct client *c = calloc(1, sizeof *c);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)proxy_port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_int_equal(connect(c->fd, (struct sockaddr *)&a, sizeof a), 0);
    char req[4096];
    int n = snprintf(req, sizeof req,
                     "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nConnection: close\r\n%s"
                     "Content-Length: %zu\r\n\r\n%s",
                     path, proxy_port, headers, strlen(body), body);
    assert_int_equal(send(c->fd, req, (size_t)n, MSG_NOSIGNAL), n);
    fcntl(c->fd, F_SETFL, O_NONBLOCK);
    c->ev = event_new(base, c->fd, EV_READ | EV_PERSIST, client_read, c);
    event_add(c->ev, NULL);
    return c;
}

static void client_free(struct client *c)
{
    event_free(c->ev);
    close(c->fd);
    free(c);
}

static bool expired;

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
    (void)fd, (void)what, (void)arg;
    expired = true;
}

/* Turns the loop until done(arg), or fails after 20 s (a loaded machine
 * under the sanitizers is slow; a case that passes never waits for it). */
static void run_until(bool (*done)(const void *), const void *arg, const char *what)
{
    struct event *t = evtimer_new(base, on_deadline, NULL);
    struct timeval tv = {20, 0};
    expired = false;
    evtimer_add(t, &tv);
    while (!done(arg) && !expired)
        event_base_loop(base, EVLOOP_ONCE);
    event_free(t);
    if (!done(arg))
        fail_msg("waited in vain for %s", what);
}

static bool answered(const void *c)
{
    return ((const struct client *)c)->ended;
}

/* So many demands wait, or one of the clients was answered instead. */
struct demands {
    unsigned n;
    const struct client *c[2];
};

static bool demands_wait(const void *arg)
{
    const struct demands *w = arg;
    return nwaiting >= w->n || (w->c[0] && w->c[0]->ended) || (w->c[1] && w->c[1]->ended);
}

/* Requests to model 0 that ended with their client gone (499). */
static uint64_t left(void)
{
    const struct proxy_stats *st = proxy_stats(px, 0);
    for (unsigned k = 0; k < st->ncodes; k++)
        if (st->codes[k].code == 499)
            return st->codes[k].n;
    return 0;
}

/* The proxy saw its client leave: it withdrew the demand, or at least
 * ended the request. */
static bool withdrawn(const void *left_before)
{
    return strstr(calls, "withdraw") || left() > *(const uint64_t *)left_before;
}

static int status_of(const struct client *c)
{
    return strncmp(c->got, "HTTP/1.1 ", 9) ? -1 : atoi(c->got + 9);
}

/* The answer's body as JSON (the proxy's error answers have a length,
 * and so has the backend's). */
static json_t *body_of(const struct client *c)
{
    const char *b = strstr(c->got, "\r\n\r\n");
    assert_non_null(b);
    json_t *j = json_loads(b + 4, 0, NULL);
    assert_non_null(j);
    return j;
}

#define CHAT "{\"model\":\"%s\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"stream\":false}"

static char *chat(const char *model)
{
    static char b[256];
    snprintf(b, sizeof b, CHAT, model);
    return b;
}

static const char *const JSON = "Content-Type: application/json\r\n";

/* ---- the cases ---- */

/* A ready model: the request goes to the address the table gives, under
 * the model's own name (the client used an alias) and the model's key
 * (the client's token stops at the proxy); the answer comes back; the
 * hold is given back at its end. */
static void ready_model_is_relayed(void **st)
{
    (void)st;
    state[0] = SCHED_READY;
    struct client *c = ask("/v1/chat/completions",
                           "Content-Type: application/json\r\n"
                           "Authorization: Bearer the-clients-token\r\n",
                           chat("fast"));
    run_until(answered, c, "the answer");
    assert_int_equal(status_of(c), 200);
    assert_non_null(strstr(c->got, "hello from the backend"));
    assert_int_equal(backend_seen, 1);
    assert_string_equal(backend_uri, "/v1/chat/completions");
    assert_string_equal(backend_auth, "Bearer the-models-key");
    json_t *sent = json_loads(backend_body, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(sent, "model")), "m0");
    json_decref(sent);
    assert_string_equal(calls, "demand m0; release m0");
    client_free(c);
}

/* A suspended model: the proxy asks for it and waits, saying nothing to
 * anyone; once the scheduler grants it the request goes, once. */
static void suspended_model_is_asked_for_then_relayed(void **st)
{
    (void)st;
    state[0] = SCHED_SUSPENDED;
    struct client *c = ask("/v1/chat/completions", JSON, chat("m0"));
    run_until(demands_wait, &(struct demands){1, {c}}, "the demand");
    assert_string_equal(calls, "demand m0");
    assert_int_equal(c->n, 0);
    assert_int_equal(backend_seen, 0);
    grant_all(0);
    run_until(answered, c, "the answer");
    assert_int_equal(status_of(c), 200);
    assert_non_null(strstr(c->got, "hello from the backend"));
    assert_int_equal(backend_seen, 1);
    assert_string_equal(calls, "demand m0; release m0");
    client_free(c);
}

/* A model that fails: each client hears it in its own API's words, 502
 * with the scheduler's text: OpenAI's error object on /v1/, Ollama's
 * string on /api/. Never granted, nothing given back. */
static void failed_model_answers_in_each_dialect(void **st)
{
    (void)st;
    state[0] = SCHED_STOPPED;
    struct client *openai = ask("/v1/chat/completions", JSON, chat("m0"));
    struct client *ollama = ask("/api/chat", JSON, chat("m0"));
    run_until(demands_wait, &(struct demands){2, {openai, ollama}}, "both demands");
    assert_int_equal(openai->n + ollama->n, 0);
    refuse_all(0, SCHED_REFUSED_FAILED, "m0 failed to start: exit status 1");
    run_until(answered, openai, "the OpenAI client's answer");
    run_until(answered, ollama, "the Ollama client's answer");
    assert_int_equal(status_of(openai), 502);
    assert_int_equal(status_of(ollama), 502);
    json_t *o = body_of(openai), *e = json_object_get(o, "error");
    assert_true(json_is_object(e));
    assert_string_equal(json_string_value(json_object_get(e, "type")), "server_error");
    assert_string_equal(json_string_value(json_object_get(e, "code")), "model_failed");
    assert_non_null(strstr(json_string_value(json_object_get(e, "message")),
                           "m0 failed to start: exit status 1"));
    json_t *l = body_of(ollama);
    assert_true(json_is_string(json_object_get(l, "error")));
    assert_non_null(strstr(json_string_value(json_object_get(l, "error")),
                           "m0 failed to start: exit status 1"));
    json_decref(o);
    json_decref(l);
    assert_int_equal(backend_seen, 0);
    assert_string_equal(calls, "demand m0; demand m0");
    client_free(openai);
    client_free(ollama);
}

/* A client that leaves while its model is resumed: its demand is
 * withdrawn (no room made for nobody), by its id, and its place in the
 * queue is free again: with max_queue = 1, the next request is asked
 * for, not refused. */
static void client_leaving_withdraws_its_demand(void **st)
{
    (void)st;
    state[0] = SCHED_SUSPENDED;
    cfg.max_queue = 1;
    struct client *c = ask("/v1/chat/completions", JSON, chat("m0"));
    run_until(demands_wait, &(struct demands){1, {c}}, "the demand");
    assert_int_equal(c->n, 0);
    char want[64];
    snprintf(want, sizeof want, "demand m0; withdraw m0 #%llu", (unsigned long long)last_id);
    uint64_t before = left();
    client_free(c);
    run_until(withdrawn, &before, "the withdrawal");
    assert_string_equal(calls, want);
    assert_int_equal(nwaiting, 0);
    struct client *next = ask("/v1/chat/completions", JSON, chat("m0"));
    run_until(demands_wait, &(struct demands){1, {next}}, "the next request's demand");
    assert_int_equal(next->n, 0);
    grant_all(0);
    run_until(answered, next, "the next answer");
    assert_int_equal(status_of(next), 200);
    assert_int_equal(backend_seen, 1);
    client_free(next);
}

/* A name the table does not know: 404 naming it, nothing asked for. */
static void unknown_model_is_404_naming_it(void **st)
{
    (void)st;
    struct client *c = ask("/v1/chat/completions", JSON, chat("no-such-model"));
    run_until(answered, c, "the answer");
    assert_int_equal(status_of(c), 404);
    json_t *j = body_of(c), *e = json_object_get(j, "error");
    assert_string_equal(json_string_value(json_object_get(e, "code")), "model_not_found");
    assert_non_null(strstr(json_string_value(json_object_get(e, "message")), "'no-such-model'"));
    json_decref(j);
    assert_string_equal(calls, "");
    assert_int_equal(backend_seen, 0);
    client_free(c);
}

/* A page's form or fetch in plain text (no preflight), even from an origin
 * that origins = lists: refused before the daemon is asked anything. */
static void browser_plain_text_is_refused_unasked(void **st)
{
    (void)st;
    state[0] = SCHED_READY;
    struct client *c = ask("/v1/chat/completions",
                           "Origin: http://app.example\r\n"
                           "Content-Type: text/plain;charset=UTF-8\r\n",
                           chat("m0"));
    run_until(answered, c, "the answer");
    assert_int_equal(status_of(c), 415);
    assert_int_equal(asked, 0);
    assert_int_equal(backend_seen, 0);
    client_free(c);
}

/* ---- one proxy for every case, its fake daemon reset before each ---- */

static int reset(void **st)
{
    (void)st;
    calls[0] = '\0';
    asked = nwaiting = backend_seen = 0;
    backend_uri[0] = backend_auth[0] = backend_body[0] = '\0';
    cfg.max_queue = 16;
    return 0;
}

/* The proxy's own listener: the listening socket proxy_listen opened that
 * is not the dashboard's (it names no port of its own: listen = ...:0). */
static unsigned proxy_listener(unsigned dash_port)
{
    for (int fd = 3; fd < 1024; fd++) {
        int on = 0;
        socklen_t ol = sizeof on;
        struct sockaddr_in a;
        socklen_t al = sizeof a;
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &ol) == 0 && on &&
            getsockname(fd, (struct sockaddr *)&a, &al) == 0 && a.sin_family == AF_INET &&
            ntohs(a.sin_port) != backend_port && ntohs(a.sin_port) != dash_port)
            return ntohs(a.sin_port);
    }
    return 0;
}

static int setup(void **st)
{
    (void)st;
    signal(SIGPIPE, SIG_IGN); /* as the daemon does */
    base = event_base_new();
    struct evhttp *backend = evhttp_new(base);
    struct evhttp_bound_socket *b = evhttp_bind_socket_with_handle(backend, "127.0.0.1", 0);
    if (!b)
        return -1;
    evhttp_set_gencb(backend, on_backend, NULL);
    struct sockaddr_in a;
    socklen_t al = sizeof a;
    getsockname(evhttp_bound_socket_get_fd(b), (struct sockaddr *)&a, &al);
    backend_port = ntohs(a.sin_port);

    snprintf(dir, sizeof dir, "/tmp/test_proxyops.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(cfg.socket, sizeof cfg.socket, "%s/sock", dir); /* vram ui's file beside it */
    snprintf(cfg.listen, sizeof cfg.listen, "127.0.0.1:0");
    snprintf(cfg.origins, sizeof cfg.origins, "http://app.example");
    cfg.max_body = 1 << 20;
    cfg.wait_s = 60;
    cfg.client_timeout_s = 60;
    snprintf(cfg.models[0].name, sizeof cfg.models[0].name, "m0");
    snprintf(cfg.models[0].api_key, sizeof cfg.models[0].api_key, "the-models-key");
    cfg.models[0].api = CONFIG_API_OPENAI;

    static const struct proxyops ops = {
        .d = NULL, .cfg = &cfg, .count = count, .model = model, .find = find,
        .demand = demand, .withdraw = withdraw, .release = release, .held_ms = held_ms,
        .ask_ctx = ask_ctx, .expires_wall_ms = expires_wall_ms, .control = control,
    };
    struct proxyops o = ops;
    o.base = base;
    char err[256];
    if (proxy_listen(&o, &px, err, sizeof err) < 0 || !px) {
        fprintf(stderr, "proxy_listen: %s\n", err);
        return -1;
    }
    const char *url = proxy_dashboard(px), *colon = url ? strrchr(url, ':') : NULL;
    proxy_port = proxy_listener(colon ? (unsigned)atoi(colon + 1) : 0);
    return proxy_port ? 0 : -1;
}

static int teardown(void **st)
{
    (void)st;
    proxy_exiting(px); /* its vram ui file goes */
    return rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(ready_model_is_relayed, reset),
        cmocka_unit_test_setup(suspended_model_is_asked_for_then_relayed, reset),
        cmocka_unit_test_setup(failed_model_answers_in_each_dialect, reset),
        cmocka_unit_test_setup(client_leaving_withdraws_its_demand, reset),
        cmocka_unit_test_setup(unknown_model_is_404_naming_it, reset),
        cmocka_unit_test_setup(browser_plain_text_is_refused_unasked, reset),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
