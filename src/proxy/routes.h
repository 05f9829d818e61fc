/* routes: every route of the proxy's address, one row each: its path,
 * the methods it takes, what its body is, what it lets a browser do
 * (browser.h), the dialect of its errors (errbody.h) and what answers it.
 * The proxy dispatches by the rows (proxy.c), the browser's rules and the
 * errors' dialect are read from them, on the dashboard's address too
 * (dash.c); tests/unit/test_routes.c holds every row to its rules. A new
 * route is a row here and the code that answers it ("Adding a proxy
 * route", in the architecture document). */
#ifndef VRAM_PROXY_ROUTES_H
#define VRAM_PROXY_ROUTES_H

#include <event2/http.h>
#include <stdbool.h>
#include <stddef.h>

#include "http/errbody.h"
#include "proxy/browser.h"
#include "proxy/proxyops.h"

struct dash;
struct front_req;
struct ollamaroutes;
struct panel;
struct route;

/* The methods a row takes: evhttp's bits, or'ed */
#define ROUTES_GET  EVHTTP_REQ_GET
#define ROUTES_HEAD EVHTTP_REQ_HEAD
#define ROUTES_POST EVHTTP_REQ_POST
#define ROUTES_READ (EVHTTP_REQ_GET | EVHTTP_REQ_HEAD)
#define ROUTES_ANY                                                                                 \
    (EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |     \
     EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH)
/* those whose request may carry a body a page could send */
#define ROUTES_WITH_BODY (EVHTTP_REQ_POST | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_PATCH)

enum routes_body {
    ROUTES_BODY_NONE,  /* none is read */
    ROUTES_BODY_MODEL, /* JSON whose "model" names the model (the proxy reads it) */
    ROUTES_BODY_OWN,   /* its answerer's: the control API's, or the model's own (/m/NAME/) */
};

/* What a row's answer is given: the proxy's parts, and the request's. */
struct routes_ctx {
    const struct proxyops *ops;
    struct ollamaroutes *ollama;
    struct panel *panel;
    struct dash *dash; /* NULL: the dashboard has no address */
    int key;           /* the request's key (conf/keys.h), -1: none */
    /* a request for a model, by its body or its path: proxy.c's */
    void (*to_model)(void *px, struct front_req *r, const char *path, const struct route *rt,
                     int key);
    void *px;
};

struct route {
    const char *path; /* the whole path; one ending in '*' is a prefix, of what it has before */
    unsigned methods; /* ROUTES_*: another gets 405, with Allow */
    enum routes_body body;
    enum browser_rule browser;
    enum errbody_dialect dialect;
    bool own_key; /* its answer asks for the key itself (or none: /ui) */
    void (*answer)(const struct routes_ctx *x, const struct route *rt, struct front_req *r,
                   const char *path);
    const char *says; /* routes_not_here's text: what to do instead */
};

extern const struct route routes_table[];
extern const size_t routes_n;

/* The row of path (without its query; len bytes of it), the first that
 * matches; NULL: no route. */
const struct route *routes_find(const char *path, size_t len);

/* What uri (a request's, query and all) lets a browser do, and its errors'
 * dialect: its row's, else BROWSER_READS and OpenAI's. */
enum browser_rule routes_browser(const char *uri);
enum errbody_dialect routes_dialect(const char *uri);

/* Answers r: its row's answer, once the method is one the row takes
 * (else 405 with Allow); without a row (NULL), 404. */
void routes_answer(const struct routes_ctx *x, const struct route *rt, struct front_req *r,
                   const char *path);

#endif
