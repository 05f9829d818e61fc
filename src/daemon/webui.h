/* webui: the dashboard (docs/ui.md): its files, embedded at build time
 * from ui/ (ui/embed.py writes the table), served at GET /ui on the control
 * socket; and the rule that keeps other web sites from steering a browser
 * at the control API. */
#ifndef VRAM_DAEMON_WEBUI_H
#define VRAM_DAEMON_WEBUI_H

#include <stdbool.h>
#include <stddef.h>

struct front_req;

struct webui_asset {
    const char *path; /* "/ui", "/ui/app.js" ... */
    const char *type;
    const unsigned char *data;
    size_t len;
    const char *etag;
};

/* The generated table (webui_assets.c, in the build folder). */
extern const struct webui_asset webui_assets[];
extern const size_t webui_nassets;

/* The file served at path ("/ui/" is "/ui"), or NULL. */
const struct webui_asset *webui_find(const char *path);

/* Answers a GET of one of the files (200, or 304 for the ETag the browser
 * has), with headers that confine the page to this address. False when
 * path is none of them (nothing sent). */
bool webui_serve(struct front_req *r, const char *path);

/* NULL when req may go on; else why a browser's request is refused (403):
 * a browser (it sends Origin or Sec-Fetch-Site) must have reached this
 * daemon by a loopback name, not a name another site controls (DNS
 * rebinding), and may POST only JSON (which a page of another site cannot
 * send here without a preflight this API never grants). host_screened:
 * the proxy passed r, having screened its Host itself (proxy/browser.c:
 * its own address and hosts =, which need not be loopback names). */
const char *webui_refused(const struct front_req *r, bool host_screened);

#endif
