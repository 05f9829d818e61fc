/* dash: vram serve's dashboard on an address of its own (`ui = HOST:PORT`
 * in [serve], else the proxy's host on a port the kernel picks), never the
 * proxy's. A browser keeps storage, and lets pages read each other, by
 * origin (scheme, host and port): the pages a model serves under /m/NAME/
 * are the proxy's origin, so with the dashboard there a model's page read
 * the dashboard's session from localStorage and unloaded another model
 * through the control API (issue 42, item 4). Here: the page (/ui), vram
 * ui's key exchanged for a session, and the control API under /vram/ with
 * a key or that session, from this origin only (no CORS: origins = opens
 * the proxy, not this); nothing else. The proxy sends /ui here, takes no
 * session, and passes no cookie of vram's to a model (uikey.h). */
#ifndef VRAM_PROXY_DASH_H
#define VRAM_PROXY_DASH_H

#include "proxy/proxyops.h"

struct dash;
struct front_req;

/* Listens on ops->cfg->ui, else on proxy_host at a port the kernel picks,
 * and writes vram ui's key for it (uikey.h): 0, or -1 with err. ops stays
 * the caller's. */
int dash_listen(const struct proxyops *ops, const char *proxy_host, struct dash **out, char *err,
                size_t len);

/* "http://HOST:PORT", the dashboard as a browser on this machine reaches it. */
const char *dash_url(const struct dash *ds);

/* Answers r (the proxy's /ui...) with a redirect to the same path on the
 * dashboard's address, by the name r's Host used. */
void dash_redirect(const struct dash *ds, struct front_req *r);

/* The daemon exits: vram ui's file goes. */
void dash_exiting(struct dash *ds);

#endif
