/* webui: the dashboard's files and what a browser may ask of the control
 * socket. The files are the bytes of ui/ as built; nothing is read from
 * disk at run time. */
#include "daemon/webui.h"

#include <event2/buffer.h>
#include <event2/http.h>
#include <string.h>
#include <strings.h>

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

bool webui_serve(struct evhttp_request *req, const char *path)
{
    const struct webui_asset *a = webui_find(path);
    if (!a)
        return false;
    struct evkeyvalq *out = evhttp_request_get_output_headers(req);
    evhttp_add_header(out, "Content-Security-Policy", CSP);
    evhttp_add_header(out, "X-Content-Type-Options", "nosniff");
    evhttp_add_header(out, "Referrer-Policy", "no-referrer");
    /* asked again each time, answered 304 while it is the same build */
    evhttp_add_header(out, "Cache-Control", "no-cache");
    evhttp_add_header(out, "ETag", a->etag);
    const char *have = evhttp_find_header(evhttp_request_get_input_headers(req), "If-None-Match");
    if (have && strstr(have, a->etag)) {
        evhttp_send_reply(req, 304, "Not Modified", NULL);
        return true;
    }
    evhttp_add_header(out, "Content-Type", a->type);
    struct evbuffer *b = evbuffer_new();
    if (!b || evbuffer_add_reference(b, a->data, a->len, NULL, NULL) < 0) {
        evhttp_send_error(req, 500, "out of memory");
    } else {
        evhttp_send_reply(req, 200, "OK", b);
    }
    if (b)
        evbuffer_free(b);
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

const char *webui_refused(struct evhttp_request *req)
{
    struct evkeyvalq *in = evhttp_request_get_input_headers(req);
    if (!evhttp_find_header(in, "Origin") && !evhttp_find_header(in, "Sec-Fetch-Site"))
        return NULL; /* not a browser: curl, vram, scripts */
    const char *host = evhttp_find_header(in, "Host");
    if (!host || !loopback_host(host))
        return "a browser reaches the control API by a loopback name only (localhost, "
               "127.0.0.1, [::1]): another name may belong to another site";
    if (evhttp_request_get_command(req) == EVHTTP_REQ_POST) {
        const char *type = evhttp_find_header(in, "Content-Type");
        if (!type || strncasecmp(type, "application/json", 16))
            return "a browser's POST to the control API must be Content-Type: application/json";
    }
    return NULL;
}
