/* The proxy's routes (proxy/routes.c), each row held to the rules a new
 * one must follow: a route that takes a body (POST, PUT, DELETE, PATCH)
 * declares what a browser may send it (JSON, a key, or the model's own
 * rules), never none, so that no page can POST plain text to it; a route
 * that reads only says so; every row is reached (none hidden behind an
 * earlier prefix); each route's errors are in its API's dialect; a method
 * a route does not take gets 405 with the Allow its row lists.
 *
 * What the rows call (the dashboard, the control API, the models' lists)
 * is the proxy's and tested end to end (tests/cli/browser.sh,
 * proxy_http.sh); here those calls are recorded, not made. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "http/front.h"
#include "proxy/dash.h"
#include "proxy/ollamaroutes.h"
#include "proxy/openairoutes.h"
#include "proxy/panel.h"
#include "proxy/routes.h"

/* ---- what the rows call, recorded ---- */

static enum evhttp_cmd_type method;
static char called[64], allow[64];
static int error_kind = -1;

enum evhttp_cmd_type front_method(const struct front_req *r)
{
    (void)r;
    return method;
}
bool front_add_header(struct front_req *r, const char *name, const char *value)
{
    (void)r;
    if (!strcmp(name, "Allow"))
        snprintf(allow, sizeof allow, "%s", value);
    return true;
}
void front_error(struct front_req *r, enum errbody_kind kind, const char *msg, int retry_after)
{
    (void)r, (void)msg, (void)retry_after;
    error_kind = (int)kind;
}
#define CALLED(name) snprintf(called, sizeof called, "%s", name)
void dash_redirect(const struct dash *ds, struct front_req *r)
{
    (void)ds, (void)r;
    CALLED("dash");
}
bool panel_route(struct panel *pn, struct front_req *r, const char *path, bool keys_set,
                 bool authorized)
{
    (void)pn, (void)r, (void)path, (void)keys_set, (void)authorized;
    CALLED("panel");
    return true;
}
void openairoutes_list(const struct proxyops *o, struct front_req *r)
{
    (void)o, (void)r;
    CALLED("list");
}
void openairoutes_model(const struct proxyops *o, struct front_req *r, const char *name)
{
    (void)o, (void)r;
    snprintf(called, sizeof called, "model %s", name);
}
#define OLLAMA(n)                                                                                  \
    void ollamaroutes_##n(struct ollamaroutes *o, struct front_req *r)                             \
    {                                                                                              \
        (void)o, (void)r;                                                                          \
        CALLED("ollama " #n);                                                                      \
    }
OLLAMA(root)
OLLAMA(version)
OLLAMA(tags)
OLLAMA(ps)
OLLAMA(show)
static void to_model(void *px, struct front_req *r, const char *path, const struct route *rt,
                     int key)
{
    (void)px, (void)r, (void)rt, (void)key;
    snprintf(called, sizeof called, "to_model %s", path);
}

/* ---- the rows ---- */

static void bodies_have_a_browser_rule(void **st)
{
    (void)st;
    for (size_t i = 0; i < routes_n; i++) {
        const struct route *rt = &routes_table[i];
        if (rt->browser == BROWSER_UNSET || !rt->methods || !rt->answer)
            fail_msg("%s: a route declares its methods, its browser rule and its answer", rt->path);
        if ((rt->methods & ROUTES_WITH_BODY) && rt->browser != BROWSER_JSON &&
            rt->browser != BROWSER_KEY && rt->browser != BROWSER_BACKEND)
            fail_msg("%s takes a body, and lets a page send it anything: its browser rule is "
                     "BROWSER_JSON (a model's), BROWSER_KEY or BROWSER_BACKEND",
                     rt->path);
        if ((rt->browser == BROWSER_READS || rt->browser == BROWSER_PAGE) &&
            (rt->methods & ~ROUTES_READ))
            fail_msg("%s reads only (its browser rule), and takes more than GET and HEAD",
                     rt->path);
        if (rt->body == ROUTES_BODY_MODEL && rt->browser != BROWSER_JSON)
            fail_msg("%s: a body that names the model is JSON from a browser", rt->path);
    }
}

/* Each row is the route of its own path: no prefix before it hides it. */
static void every_row_is_reached(void **st)
{
    (void)st;
    for (size_t i = 0; i < routes_n; i++) {
        char path[128];
        size_t n = strlen(routes_table[i].path);
        snprintf(path, sizeof path, "%s", routes_table[i].path);
        if (path[n - 1] == '*')
            snprintf(path + n - 1, sizeof path - n + 1, "x/y");
        if (routes_find(path, strlen(path)) != &routes_table[i])
            fail_msg("%s is hidden by %s, before it", routes_table[i].path,
                     routes_find(path, strlen(path))->path);
    }
    assert_null(routes_find("/nowhere", 8));
    assert_null(routes_find("/v1", 3));
    assert_ptr_equal(routes_find("/v1/models/x", 10), routes_find("/v1/models", 10)); /* a length */
}

static void dialects_and_rules(void **st)
{
    (void)st;
    const char *plain[] = {"/api/chat", "/api/generate?x=1", "/vram/v1/models", "/ui",
                           "/ui?k=1",   "/api/nothing",      "/api/pull"};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        if (routes_dialect(plain[i]) != ERRBODY_PLAIN)
            fail_msg("%s: Ollama's plain errors", plain[i]);
    const char *openai[] = {"/v1/chat/completions", "/m/sd/x", "/nowhere", "/v1/models?x"};
    for (size_t i = 0; i < sizeof openai / sizeof openai[0]; i++)
        if (routes_dialect(openai[i]) != ERRBODY_OPENAI)
            fail_msg("%s: OpenAI's errors", openai[i]);
    assert_int_equal(routes_browser("/ui/app.js?v=2"), BROWSER_PAGE);
    assert_int_equal(routes_browser("/m/sd/upload"), BROWSER_BACKEND);
    assert_int_equal(routes_browser("/v1/embeddings"), BROWSER_JSON);
    assert_int_equal(routes_browser("/vram/v1/models/x/unload"), BROWSER_KEY);
    assert_int_equal(routes_browser("/nowhere"), BROWSER_READS);
}

static void answered_by_the_row(const char *m, enum evhttp_cmd_type cmd, const char *path,
                                const char *want_called, const char *want_allow)
{
    static struct config cfg;
    static struct proxyops ops = {.cfg = &cfg};
    struct routes_ctx x = {.ops = &ops, .key = -1, .to_model = to_model};
    called[0] = allow[0] = '\0';
    error_kind = -1;
    method = cmd;
    const struct route *rt = routes_find(path, strlen(path));
    assert_non_null(rt);
    routes_answer(&x, rt, NULL, path);
    if (strcmp(called, want_called) || strcmp(allow, want_allow))
        fail_msg("%s %s: called '%s', Allow '%s'; want '%s', '%s'", m, path, called, allow,
                 want_called, want_allow);
}

static void methods_are_the_rows(void **st)
{
    (void)st;
    answered_by_the_row("POST", EVHTTP_REQ_POST, "/api/chat", "to_model /api/chat", "");
    answered_by_the_row("GET", EVHTTP_REQ_GET, "/api/chat", "", "POST");
    assert_int_equal(error_kind, ERRBODY_METHOD);
    answered_by_the_row("DELETE", EVHTTP_REQ_DELETE, "/v1/models", "", "GET, HEAD");
    answered_by_the_row("HEAD", EVHTTP_REQ_HEAD, "/api/ps", "", "GET");
    answered_by_the_row("GET", EVHTTP_REQ_GET, "/v1/models/llama3.1%3A8b", "model llama3.1%3A8b",
                        "");
    answered_by_the_row("PATCH", EVHTTP_REQ_PATCH, "/m/sd/x", "to_model /m/sd/x", "");
    answered_by_the_row("GET", EVHTTP_REQ_GET, "/", "ollama root", "");
    answered_by_the_row("POST", EVHTTP_REQ_POST, "/api/pull", "", "");
    assert_int_equal(error_kind, ERRBODY_NOT_IMPLEMENTED);
    answered_by_the_row("POST", EVHTTP_REQ_POST, "/vram/v1/models/m/load", "panel", "");
    method = EVHTTP_REQ_GET;
    error_kind = -1;
    routes_answer(NULL, NULL, NULL, "/nowhere");
    assert_int_equal(error_kind, ERRBODY_NO_ROUTE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bodies_have_a_browser_rule),
        cmocka_unit_test(every_row_is_reached),
        cmocka_unit_test(dialects_and_rules),
        cmocka_unit_test(methods_are_the_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
