/* panel: the dashboard and the control API on the proxy's address. GET
 * /ui (the page's files) and /vram/... (the control API, the same routes
 * as on the socket) are handed to the control API in-process, which
 * answers them on the client's connection (server-sent events included).
 * /vram/ asks for one of the proxy's keys, or a session of vram ui: without
 * either the control API stays on the socket, whose file mode says who may
 * use it. The page's files hold no data and are served to anyone (a
 * browser cannot send a token with a page load; the page asks for it). */
#ifndef VRAM_PROXY_PANEL_H
#define VRAM_PROXY_PANEL_H

#include <stdbool.h>

struct front_req;
struct panel;
struct proxyops;

/* ops: the daemon's, whose control() answers what the panel takes. */
struct panel *panel_new(const struct proxyops *ops);

/* Takes r when its path is the panel's: passed on, or refused (401
 * without a key, 403 with no key configured). False (r untouched) for any
 * other path. keys_set: whether the proxy has keys (token =, tokens =);
 * authorized: whether r carries one, or a session of vram ui (uikey.h). */
bool panel_route(struct panel *pn, struct front_req *r, const char *path, bool keys_set,
                 bool authorized);

#endif
