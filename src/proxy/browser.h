/* browser: what the proxy's address answers a web browser, before any
 * route: the Host must name the listener (a page elsewhere cannot point a
 * name of its own at it, DNS rebinding); a page of another origin gets
 * nothing unless `origins =` lists it (then CORS: its preflight answered,
 * its answers readable); and what each route declares (proxy/routes.c):
 * a browser's body to a model route is JSON, which no other site can send
 * without that preflight. Clients that are not browsers (curl, the SDKs)
 * send no Origin and are not changed by it. The rules, and the test that
 * checks each, are in docs/security.md. */
#ifndef VRAM_PROXY_BROWSER_H
#define VRAM_PROXY_BROWSER_H

#include <stdbool.h>

struct browser;
struct front_req;

/* What a route lets a browser do: each route of the proxy declares one
 * (proxy/routes.c; its test refuses a route that takes a body without
 * JSON, KEY or BACKEND). */
enum browser_rule {
    BROWSER_UNSET,   /* declared by no route: refused by routes' test */
    BROWSER_READS,   /* GET and HEAD only: no page elsewhere may ask (Sec-Fetch-Site) */
    BROWSER_PAGE,    /* a page: a link followed from elsewhere may open it */
    BROWSER_JSON,    /* a body for a model: a browser's is JSON, anyone's is not multipart */
    BROWSER_KEY,     /* served with Authorization: Bearer only, which no page of
                      * another origin sends without a preflight */
    BROWSER_BACKEND, /* the model's own (/m/NAME/): its OPTIONS too; forms reach it */
};

/* For a listener on host (an IPv4 address, as listen = says it). NULL on
 * no memory. */
struct browser *browser_new(const char *host);
void browser_free(struct browser *b);

/* Screens r, for a route of rule, under origins (an origins = list, ""
 * none) and hosts (a hosts = list): true when it was answered here
 * (refused in the route's dialect, or a CORS preflight), and the caller is
 * done with it; false when it goes on to its route, its answers then
 * carrying CORS headers when it came from an allowed origin. */
bool browser_screen(const struct browser *b, const char *origins, const char *hosts,
                    struct front_req *r, enum browser_rule rule);

/* Whether r's Host, Origin and Sec-Fetch-* pass the rules browser_screen
 * applies first, for a route of rule: asked before a request's body is
 * read (its 100 Continue), so that nothing of a refused request is taken
 * in. */
bool browser_head_pass(const struct browser *b, const char *origins, const char *hosts,
                       const struct front_req *r, enum browser_rule rule);

/* browser_head_pass for an address whose routes only read (the metrics
 * address). */
bool browser_head_ok(const struct browser *b, const char *origins, const char *hosts,
                     const struct front_req *r);

/* Whether r came from a browser's page of this very address (an Origin
 * equal to its Host), as the dashboard's own requests do. */
bool browser_same_origin(const struct front_req *r);

#endif
