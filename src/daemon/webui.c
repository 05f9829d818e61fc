/* webui: the dashboard's files and what a browser may ask of the control
 * socket. The files are the bytes of ui/ as built; nothing is read from
 * disk at run time. */
#include "daemon/webui.h"

#include <string.h>
#include <strings.h>

#include "http/front.h"

/* default-src 'self' also keeps the page from loading anything elsewhere;
 * the rest closes what default-src does not cover */
static const char CSP[] = "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; "
                          "base-uri 'none'; form-action 'none'";

const struct webui_asset *webui_find(const char *path)
{
    if (!strcmp(path, "/ui/"))
        path = "/ui";
    for (size_t i = 0; i < webui_nassets; i++)
        if (!strcmp(webui_assets[i].path, path))
            return &webui_assets[i];
    return NULL;
}

bool webui_serve(struct front_req *r, const char *path)
{
    const struct webui_asset *a = webui_find(path);
    if (!a)
        return false;
    /* asked again each time (no-cache), answered 304 while it is the same build */
    const char *names[] = {"Content-Security-Policy",
                           "X-Content-Type-Options",
                           "Referrer-Policy",
                           "Cache-Control",
                           "ETag",
                           "Content-Type"};
    const char *values[] = {CSP, "nosniff", "no-referrer", "no-cache", a->etag, a->type};
    const char *have = front_header(r, "If-None-Match");
    if (have && strstr(have, a->etag))
        front_reply(r, 304, names, values, 5, NULL, 0);
    else
        front_reply(r, 200, names, values, 6, (const char *)a->data, a->len);
    return true;
}

/* localhost, 127.x.y.z or [::1], with or without a port */
static bool loopback_host(const char *host)
{
    size_t n = strlen(host);
    const char *colon = strrchr(host, ':');
    if (host[0] == '[')
        return !strncmp(host, "[::1]", 5) && (n == 5 || host[5] == ':');
    if (colon)
        n = (size_t)(colon - host);
    if (n == 9 && !strncasecmp(host, "localhost", 9))
        return true;
    if (n < 7 || strncmp(host, "127.", 4))
        return false;
    for (size_t i = 4; i < n; i++)
        if (host[i] != '.' && (host[i] < '0' || host[i] > '9'))
            return false;
    return true;
}

const char *webui_refused(const struct front_req *r, bool host_screened)
{
    if (!front_header(r, "Origin") && !front_header(r, "Sec-Fetch-Site"))
        return NULL; /* not a browser: curl, vram, scripts */
    const char *host = front_header(r, "Host");
    if (!host_screened && (!host || !loopback_host(host)))
        return "a browser reaches the control API by a loopback name only (localhost, "
               "127.0.0.1, [::1]): another name may belong to another site";
    if (front_method(r) == EVHTTP_REQ_POST) {
        const char *type = front_header(r, "Content-Type");
        if (!type || strncasecmp(type, "application/json", 16))
            return "a browser's POST to the control API must be Content-Type: application/json";
    }
    return NULL;
}
