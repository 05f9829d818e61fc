/* dash: the dashboard's own address: its listener, its browser rules (the
 * proxy's, without origins =), vram ui's key and sessions, and the page
 * and the control API handed to the daemon (panel.c). */
#include "proxy/dash.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "app/log.h"
#include "conf/keys.h"
#include "conf/origins.h"
#include "http/fdguard.h"
#include "http/front.h"
#include "http/wbuf.h"
#include "proxy/browser.h"
#include "proxy/panel.h"
#include "proxy/routes.h"
#include "proxy/uikey.h"

struct dash {
    const struct proxyops *ops;
    struct front *front;
    struct browser *browser;
    struct panel *panel;
    struct uikey *uikey; /* NULL if its file could not be written */
    unsigned port;
    char url[160];
};

static void on_request(void *arg, struct front_req *r)
{
    struct dash *ds = arg;
    const struct config *cfg = ds->ops->cfg;
    const char *uri = front_uri(r), *q = strchr(uri, '?');
    char path[2048];
    wbuf_copy(path, sizeof path, uri, q ? (size_t)(q - uri) : strlen(uri));
    /* no origins =: a page elsewhere has nothing to ask of the dashboard */
    if (browser_screen(ds->browser, "", cfg->hosts, r, routes_browser(path)) ||
        uikey_exchange(ds->uikey, r, path, q ? q + 1 : NULL))
        return;
    int key = cfg->keys.n ? keys_match(&cfg->keys, front_header(r, "Authorization")) : -1;
    if (panel_route(ds->panel, r, path, cfg->keys.n > 0, key >= 0 || uikey_session(ds->uikey, r)))
        return;
    front_error(r, ERRBODY_NO_ROUTE,
                "this is vram serve's dashboard (/ui, and the control API under /vram/); the "
                "models are on the proxy's address (listen = in [serve])",
                0);
}

/* Answered at once, or handed to the control API, which takes its close. */
static void on_closed(void *arg, struct front_req *r, void *req_arg)
{
    (void)arg, (void)r, (void)req_arg;
}

static bool on_head(void *arg, const struct front_req *r)
{
    const struct dash *ds = arg;
    return browser_head_pass(ds->browser, "", ds->ops->cfg->hosts, r, routes_browser(front_uri(r)));
}

/* the proxy's rows say it for the routes both addresses have (/ui, /vram/) */
static enum errbody_dialect on_dialect(void *arg, const char *uri)
{
    (void)arg;
    return routes_dialect(uri);
}

static const struct front_ops dash_ops = {on_request, on_closed, NULL, on_head, on_dialect};

/* A listening socket on host:port (port 0: the kernel's pick, told in
 * *bound): its descriptor, or -1 with err. */
static int bind_to(const char *host, unsigned port, unsigned *bound, char *err, size_t len)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
        struct addrinfo hint = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
        if (getaddrinfo(host, NULL, &hint, &res) != 0 || !res) {
            snprintf(err, len, "%s: not an IPv4 address or a name this machine resolves", host);
            return -1;
        }
        a.sin_addr = ((const struct sockaddr_in *)res->ai_addr)->sin_addr;
        freeaddrinfo(res);
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
    socklen_t al = sizeof a;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 512) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &al) < 0) {
        snprintf(err, len, "cannot listen on %s:%u: %s", host, port, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *bound = ntohs(a.sin_port);
    return fd;
}

int dash_listen(const struct proxyops *ops, const char *proxy_host, struct dash **out, char *err,
                size_t len)
{
    const struct config *cfg = ops->cfg;
    char host[96], why[256];
    unsigned port = 0;
    *out = NULL;
    if (cfg->ui[0] &&
        (sscanf(cfg->ui, "%95[^:]:%u", host, &port) != 2 || port > 65535)) {
        snprintf(err, len, "ui = %s: HOST:PORT, like 127.0.0.1:11501", cfg->ui);
        return -1;
    }
    if (!cfg->ui[0])
        snprintf(host, sizeof host, "%s", proxy_host);
    /* bound first: a port taken leaves nothing behind */
    unsigned bound;
    int fd = bind_to(host, port, &bound, why, sizeof why);
    if (fd < 0) {
        snprintf(err, len, "ui = %s: %s", cfg->ui[0] ? cfg->ui : host, why);
        return -1;
    }
    struct dash *ds = calloc(1, sizeof *ds);
    if (!ds) {
        close(fd);
        snprintf(err, len, "out of memory");
        return -1;
    }
    *out = ds;
    ds->ops = ops;
    ds->port = bound;
    ds->panel = panel_new(ops);
    ds->browser = browser_new(host);
    struct front_limits lim = {.max_body = 64 * 1024,
                               .timeout_s = cfg->client_timeout_s,
                               .max_conns = fdguard_cap(FDGUARD_CONTROL)};
    ds->front = front_new(ops->base, &lim, &dash_ops, ds);
    if (!ds->panel || !ds->browser || !ds->front ||
        front_listen_fd(ds->front, fd, "the dashboard", why, sizeof why) < 0) {
        snprintf(err, len, "ui: out of memory");
        return -1;
    }
    /* the address a browser on this machine reaches: 0.0.0.0 is every one */
    snprintf(ds->url, sizeof ds->url, "http://%s:%u", strcmp(host, "0.0.0.0") ? host : "127.0.0.1",
             ds->port);
    ds->uikey = uikey_new(cfg->socket, host, ds->port, why, sizeof why);
    if (!ds->uikey)
        log_msg(LOG_LV_WARN, "vram ui cannot open the dashboard: %s", why);
    return 0;
}

const char *dash_url(const struct dash *ds)
{
    return ds ? ds->url : NULL;
}

void dash_redirect(const struct dash *ds, struct front_req *r)
{
    const char *host = front_header(r, "Host"), *name = NULL;
    size_t n = host ? origins_host_name(host, &name) : 0;
    char where[2400];
    if (n)
        snprintf(where, sizeof where, "http://%.*s:%u%s", (int)n, name, ds->port, front_uri(r));
    else
        snprintf(where, sizeof where, "%s%s", ds->url, front_uri(r));
    const char *names[] = {"Location", "Cache-Control", "Referrer-Policy"};
    const char *values[] = {where, "no-store", "no-referrer"};
    front_reply(r, 307, names, values, 3, "", 0);
}

void dash_exiting(struct dash *ds)
{
    if (ds)
        uikey_remove(ds->uikey);
}
