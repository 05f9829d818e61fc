/* uikey: the dashboard for whoever may use the control socket, with no
 * token to configure (`vram ui`), the way Jupyter does it: at start the
 * daemon writes the dashboard's URL with a secret key into SOCKET.ui,
 * readable by the socket's own people only (the daemon's user; group vram
 * for the system service). The URL is exchanged once for a session: an
 * HttpOnly, SameSite=Strict cookie, and a value the page keeps in its own
 * origin's storage and sends as X-Vram-Session (cookies are not kept
 * apart by port: another local user's server on another port of the same
 * name would be sent the cookie, never the page's storage). Both, from a
 * page of this very address, open the control API under /vram/ as the
 * token does. Sessions live as long as the daemon. */
#ifndef VRAM_PROXY_UIKEY_H
#define VRAM_PROXY_UIKEY_H

#include <stdbool.h>
#include <stddef.h>

struct front_req;
struct uikey;

/* A new key for the proxy on host:port, its URL written to socket.ui
 * (what was there before is replaced). NULL with err. */
struct uikey *uikey_new(const char *socket, const char *host, unsigned port, char *err,
                        size_t len);

/* GET /ui?key=KEY: answered here (303 to the page with a new session, or
 * 403 for a key that is not this daemon's), true; false for any other
 * request. query: the URI's query, NULL for none. */
bool uikey_exchange(struct uikey *k, struct front_req *r, const char *path, const char *query);

/* Whether r carries a live session: its cookie and its X-Vram-Session,
 * and no Origin but its own address's. */
bool uikey_session(const struct uikey *k, const struct front_req *r);

/* A Cookie header's value without vram's sessions (vram_ui_PORT=...),
 * into out (len at least strlen(cookie) + 1): what a model may be sent.
 * Cookies are not kept apart by port, so a browser sends the dashboard's
 * to the proxy's address too, where a model's page would be sent it. */
void uikey_strip(const char *cookie, char *out, size_t len);

/* At exit: the file goes, if it still is the one this daemon wrote. */
void uikey_remove(struct uikey *k);

#endif
