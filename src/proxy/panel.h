/* panel: the dashboard and the control API on the proxy's address. GET
 * /ui (the page's files) and /vram/... (the control API, the same routes
 * as on the socket) are passed to the control socket as they are and the
 * answers streamed back (server-sent events included). /vram/ asks for one
 * of the proxy's keys, or a session of vram ui: without either the
 * control API stays on the socket, whose file mode says who may use it. The page's
 * files hold no data and are served to anyone (a browser cannot send a
 * token with a page load; the page asks for it). */
#ifndef VRAM_PROXY_PANEL_H
#define VRAM_PROXY_PANEL_H

#include <stdbool.h>

struct event_base;
struct front_req;
struct panel;

/* socket: the control API's. */
struct panel *panel_new(struct event_base *base, const char *socket);

/* Takes r when its path is the panel's: passed on, or refused (401
 * without a key, 403 with no key configured). False (r untouched) for any
 * other path. keys_set: whether the proxy has keys (token =, tokens =);
 * authorized: whether r carries one, or a session of vram ui (uikey.h). */
bool panel_route(struct panel *pn, struct front_req *r, const char *path, bool keys_set,
                 bool authorized);

/* A client left: true when req_arg was one of the panel's requests (its
 * connection to the socket is then closed). */
bool panel_closed(struct panel *pn, void *req_arg);

#endif
