/* browser: the proxy's rules for requests a web browser makes.
 *
 * What tells a browser's request: every request a page makes with a body,
 * and every request it makes to another origin with fetch or XHR, carries
 * Origin (the Fetch standard; a form's POST too, "null" where the page
 * hides where it is). Requests without one that a page elsewhere can
 * still make (an image, a script, a link followed) are GETs, and current
 * browsers mark them Sec-Fetch-Site: cross-site or same-site. curl and
 * the SDKs send neither: to them none of this applies, but the Host. */
#include "proxy/browser.h"

#include <event2/buffer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "http/front.h"
#include "conf/origins.h"

struct browser {
    bool loopback;      /* the listener is on the loopback: loopback names only */
    char hostname[256]; /* this machine's name, for a listener elsewhere */
    char address[64];   /* the listener's own address */
};

struct browser *browser_new(const char *host)
{
    struct browser *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    snprintf(b->address, sizeof b->address, "%s", host);
    b->loopback = origins_loopback(host, strlen(host));
    if (gethostname(b->hostname, sizeof b->hostname - 1) < 0)
        b->hostname[0] = '\0';
    return b;
}

void browser_free(struct browser *b)
{
    free(b);
}

/* Whether a Host names this listener: the loopback's names always (a page
 * cannot make them its own); for a listener elsewhere also its addresses
 * by number (no DNS answer can stand in for one) and the machine's name;
 * and what hosts = adds. */
static bool host_ok(const struct browser *b, const char *hosts, const char *name, size_t n)
{
    if (origins_loopback(name, n) || origins_host_listed(hosts, name, n))
        return true;
    if (b->loopback)
        return false;
    return origins_ip_literal(name, n) ||
           (n == strlen(b->hostname) && !strncasecmp(name, b->hostname, n));
}

/* An Origin naming the Host's own authority: a page of this address. */
static bool same_origin(const char *origin, const char *host)
{
    if (!host)
        return false;
    const char *a = strstr(origin, "://");
    if (!a || (strncasecmp(origin, "http://", 7) && strncasecmp(origin, "https://", 8)))
        return false;
    return !strcasecmp(a + 3, host);
}

bool browser_same_origin(const struct front_req *r)
{
    const char *o = front_header(r, "Origin");
    return o && same_origin(o, front_header(r, "Host"));
}

static bool json_type(const char *t)
{
    size_t n = strcspn(t, ";");
    while (n && (t[n - 1] == ' ' || t[n - 1] == '\t'))
        n--;
    return (n == 16 && !strncasecmp(t, "application/json", 16)) ||
           (n > 17 && !strncasecmp(t, "application/", 12) && !strncasecmp(t + n - 5, "+json", 5));
}

/* A list of header names as a preflight asks for them (letters, digits,
 * '-', commas, blanks), so that it can be said back as it is. */
static bool header_list(const char *v)
{
    return strlen(v) < 512 && v[strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789-_, ")] == '\0';
}

static void preflight(struct front_req *r, const char *origin)
{
    const char *names[6], *values[6];
    size_t n = 0;
    names[n] = "Access-Control-Allow-Origin";
    values[n++] = origin;
    names[n] = "Access-Control-Allow-Methods";
    values[n++] = FRONT_ALLOW;
    const char *asked = front_header(r, "Access-Control-Request-Headers");
    if (asked && header_list(asked)) { /* Authorization, Content-Type, the SDKs' own */
        names[n] = "Access-Control-Allow-Headers";
        values[n++] = asked;
    }
    names[n] = "Access-Control-Max-Age";
    values[n++] = "600";
    /* Chromium's Private Network Access: a page on the Internet asking for a
     * loopback or private address; the origin is listed, so it may */
    const char *pna = front_header(r, "Access-Control-Request-Private-Network");
    if (pna && !strcasecmp(pna, "true")) {
        names[n] = "Access-Control-Allow-Private-Network";
        values[n++] = "true";
    }
    names[n] = "Vary";
    values[n++] = "Origin, Access-Control-Request-Method, Access-Control-Request-Headers";
    front_reply(r, 204, names, values, n, "", 0);
}

/* What the Host, Origin and Sec-Fetch-* of r say: NULL when it may go on
 * (*foreign: from an allowed origin elsewhere), else why not, in msg. */
static const char *verdict(const struct browser *b, const char *origins, const char *hosts,
                           const struct front_req *r, enum browser_rule rule, bool *foreign,
                           char *msg, size_t len)
{
    const char *host = front_header(r, "Host");
    *foreign = false;
    if (host && *host) { /* none: HTTP/1.0, or not a browser (a browser always sends it) */
        const char *name;
        size_t n = origins_host_name(host, &name);
        if (!n || !host_ok(b, hosts, name, n)) {
            snprintf(msg, len,
                     "Host '%.100s' is not a name of this address: a page elsewhere may have "
                     "pointed a name of its own here (DNS rebinding). A name of yours: add it "
                     "to hosts = in [serve] (hosts = * behind a reverse proxy that checks it)",
                     host);
            return msg;
        }
    }
    enum evhttp_cmd_type cmd = front_method(r);
    const char *origin = front_header(r, "Origin");
    const char *site = front_header(r, "Sec-Fetch-Site");
    if (origin && !same_origin(origin, host)) {
        if (!origins_allowed(origins, origin, strlen(origin))) {
            snprintf(msg, len,
                     "a page of %.100s may not use this address: add it to origins = in "
                     "[serve] (or OLLAMA_ORIGINS) if it should",
                     origin);
            return msg;
        }
        *foreign = true;
    } else if (!origin && site && (!strcmp(site, "cross-site") || !strcmp(site, "same-site"))) {
        /* an image, a script, a prefetch another page asked for; a link
         * followed to the dashboard's page (it holds no data) is fine */
        const char *mode = front_header(r, "Sec-Fetch-Mode");
        if (!(mode && !strcmp(mode, "navigate") && rule == BROWSER_PAGE &&
              (cmd == EVHTTP_REQ_GET || cmd == EVHTTP_REQ_HEAD)))
            return "a page elsewhere asked for this without saying where it is from "
                   "(Sec-Fetch-Site without Origin): refused";
    }
    return NULL;
}

bool browser_head_pass(const struct browser *b, const char *origins, const char *hosts,
                       const struct front_req *r, enum browser_rule rule)
{
    char msg[400];
    bool foreign;
    return !verdict(b, origins, hosts, r, rule, &foreign, msg, sizeof msg);
}

bool browser_head_ok(const struct browser *b, const char *origins, const char *hosts,
                     const struct front_req *r)
{
    return browser_head_pass(b, origins, hosts, r, BROWSER_READS);
}

bool browser_screen(const struct browser *b, const char *origins, const char *hosts,
                    struct front_req *r, enum browser_rule rule)
{
    char msg[400];
    bool foreign;
    const char *why = verdict(b, origins, hosts, r, rule, &foreign, msg, sizeof msg);
    if (why) {
        front_error(r, ERRBODY_FORBIDDEN, why, 0);
        return true;
    }
    enum evhttp_cmd_type cmd = front_method(r);
    const char *origin = front_header(r, "Origin");
    const char *site = front_header(r, "Sec-Fetch-Site");
    if (cmd == EVHTTP_REQ_OPTIONS && origin && front_header(r, "Access-Control-Request-Method")) {
        preflight(r, origin);
        return true;
    }
    if (cmd == EVHTTP_REQ_OPTIONS && rule != BROWSER_BACKEND) { /* a model's own, under /m/ */
        static const char *const an[] = {"Allow"};
        static const char *const av[] = {FRONT_ALLOW};
        front_reply(r, 204, an, av, 1, "", 0);
        return true;
    }
    if (foreign) {
        front_add_header(r, "Access-Control-Allow-Origin", origin);
        front_add_header(r, "Access-Control-Expose-Headers", "Retry-After");
        front_add_header(r, "Vary", "Origin");
    }
    /* a browser's body for a model is JSON: a page elsewhere cannot send
     * that without the preflight, which only the listed origins pass. Other
     * clients' JSON may say otherwise (curl -d says a form, Node's fetch
     * text/plain); multipart is never the JSON the model is read from */
    const char *type = front_header(r, "Content-Type");
    bool json = type && json_type(type);
    if (rule == BROWSER_JSON && evbuffer_get_length(front_body(r)) &&
        (((origin || site) && !json) || (type && !strncasecmp(type, "multipart/", 10)))) {
        snprintf(msg, sizeof msg,
                 "%s must be JSON, Content-Type: application/json (this one says %.80s)%s",
                 origin || site ? "a browser's request to a model" : "a request to a model",
                 type ? type : "nothing",
                 json ? "" : "; a backend that takes forms is reached under /m/NAME/");
        front_error(r, ERRBODY_MEDIA_TYPE, msg, 0);
        return true;
    }
    return false;
}
