/* Fuzz target: the proxy's HTTP server toward clients (http/front.c with
 * hdrs.c, wbuf.c, errbody.c): the input is what a client sends, written
 * in pieces into one end of a socket pair whose other end front.c serves
 * on a real event loop. A fake proxy answers by the path: whole, streamed
 * (chunked or close-delimited), with a length, cut short, as an error in
 * the route's dialect, or later (after the next piece arrives, or never:
 * the client leaves first). What comes back must parse as answers to the
 * requests the proxy saw, in order (answers to HEAD without bodies, 1xx
 * skipped), plus at most one refusal of a request it never saw, broken
 * only where the proxy cut an answer; and every connection must be gone
 * once the client is. Every request first meets the browser rules
 * (browser.c: Host, Origin, Sec-Fetch-*, CORS preflights, content types)
 * under lists with patterns, and its Authorization the keys (keys.c);
 * what they answer counts as the proxy's answer. */
#include <errno.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <http_parser.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy/browser.h"
#include "http/front.h"
#include "conf/keys.h"

#define MAX_SEEN 256

static struct event_base *base;
static struct front *front;
static struct browser *rules;
static struct keys keys;
static const char ORIGINS[] = "http://app.example:3000, http://localhost:*, https://*.example.com";
static const char HOSTS[] = "gpu.example, *.lan, x"; /* x: the older corpus's Host */

static struct {
    bool head, cut; /* asked with HEAD; answered with front_abort */
} seen[MAX_SEEN];
static unsigned nseen;
static bool too_many;
static struct front_req *later; /* answered after the next piece */

static void expect(struct front_req *r, bool cut)
{
    if (nseen < MAX_SEEN) {
        seen[nseen].head = front_method(r) == EVHTTP_REQ_HEAD;
        seen[nseen++].cut = cut;
    } else {
        too_many = true;
    }
}

static void on_request(void *arg, struct front_req *r)
{
    (void)arg;
    const char *uri = front_uri(r);
    char path[256];
    snprintf(path, sizeof path, "%.*s", (int)strcspn(uri, "?"), uri);
    /* its place among the answers, taken first: an answer written here lets
     * front.c read the next pipelined request before this call returns */
    unsigned slot = nseen;
    expect(r, false);
    /* every rule a route may declare (proxy/routes.c), by the path's first letter */
    enum browser_rule rule = (enum browser_rule)((unsigned char)path[1] % (BROWSER_BACKEND + 1));
    if (browser_screen(rules, ORIGINS, HOSTS, r, rule))
        return; /* refused or a preflight: an answer like any */
    if (keys_match(&keys, front_header(r, "Authorization")) >= 0 && uri[0] == '/' && uri[1] == 'k') {
        front_error(r, ERRBODY_UNAUTHORIZED, "the key is right; the answer says 401 anyway", 0);
        return;
    }
    static const char *const n[] = {"Content-Type", "X-Echo"};
    const char *echo = front_header(r, "X-Echo");
    const char *v[] = {"text/plain", echo ? echo : "-"};
    char c = uri[0] == '/' ? uri[1] : 0;
    if (c == 'a') { /* cut short mid-answer */
        if (slot < MAX_SEEN)
            seen[slot].cut = true;
        front_reply_start(r, 200, n, v, 2, false);
        front_reply_part(r, "part", 4);
        front_abort(r);
    } else if (c == 's') { /* streamed */
        front_reply_start(r, 200, n, v, 2, false);
        front_reply_part(r, "data: 1\n\n", 9);
        front_reply_part(r, "", 0);
        front_reply_part(r, "data: 2\n\n", 9);
        front_reply_end(r);
    } else if (c == 'l') { /* in parts, with a length */
        static const char *const ln[] = {"Content-Length"};
        static const char *const lv[] = {"5"};
        front_reply_start(r, 200, ln, lv, 1, true);
        front_reply_part(r, "he", 2);
        front_reply_part(r, "llo", 3);
        front_reply_end(r);
    } else if (c == 'n') { /* no content */
        front_reply_start(r, 204, NULL, NULL, 0, false);
        front_reply_end(r);
    } else if (c == 'e') { /* an error, of a kind the URI picks */
        enum errbody_kind k = (enum errbody_kind)(strlen(uri) % ERRBODY_KINDS);
        /* 501 is front.c's own, for a method it does not know: never the proxy's */
        front_error(r, k == ERRBODY_NOT_IMPLEMENTED ? ERRBODY_METHOD : k, uri,
                    (int)(strlen(uri) % 3));
    } else if (c == 'w' && !later) { /* later */
        front_set_arg(r, r);
        later = r;
    } else {
        front_reply(r, 200, n, v, 2, evbuffer_get_length(front_body(r)) ? "body\n" : "ok\n",
                    evbuffer_get_length(front_body(r)) ? 5 : 3);
    }
}

static void on_closed(void *arg, struct front_req *r, void *req_arg)
{
    (void)arg;
    if (req_arg != r || later != r)
        abort(); /* closed() hands back what the request was given */
    later = NULL;
}

static const struct front_ops ops = {on_request, on_closed};

/* ---- the answers, checked ---- */

struct check {
    unsigned next;      /* the request the next answer is for */
    bool unseen;        /* this answer is front.c's 501 to a request the proxy never saw */
    bool refused, done; /* a refusal came (the last answer there may be) */
    int status;
};

static int c_headers(http_parser *p)
{
    struct check *k = p->data;
    k->status = (int)p->status_code;
    if (p->status_code / 100 == 1)
        return 0; /* 100 Continue: the answer follows */
    if (k->refused)
        abort();            /* nothing after a refusal */
    if (p->status_code == 501) { /* a method front.c does not know: answered, the next goes on */
        k->unseen = true;
        return 0;
    }
    if (k->next >= nseen) { /* a request the proxy never saw: refused */
        if (p->status_code != 400 && p->status_code != 408 && p->status_code != 413 &&
            p->status_code != 431)
            abort();
        k->refused = true;
        return 0;
    }
    return seen[k->next].head ? 1 : 0;
}

static int c_complete(http_parser *p)
{
    struct check *k = p->data;
    if (k->status / 100 != 1 && !k->refused && !k->unseen)
        k->next++;
    k->unseen = false;
    return 0;
}

static void check(const char *out, size_t n)
{
    if (too_many)
        return;
    static const http_parser_settings s = {.on_headers_complete = c_headers,
                                           .on_message_complete = c_complete};
    http_parser p;
    struct check k = {0};
    http_parser_init(&p, HTTP_RESPONSE);
    p.data = &k;
    size_t used = http_parser_execute(&p, &s, out, n);
    if (p.http_errno == HPE_OK && used == n)
        http_parser_execute(&p, &s, out, 0); /* the end: a close-delimited answer ends here */
    /* (a cut answer to HTTP/1.0, close-delimited, looks whole: it is no error) */
    bool cut = k.next < nseen && seen[k.next].cut;
    if (p.http_errno != HPE_OK && !cut)
        abort(); /* framing broken, and not where the proxy cut an answer */
}

/* ---- the client ---- */

static void drain(int fd, struct evbuffer *out, bool *eof)
{
    char buf[65536];
    for (;;) {
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r > 0) {
            evbuffer_add(out, buf, (size_t)r);
            continue;
        }
        if (r == 0 || (errno != EAGAIN && errno != EINTR))
            *eof = true;
        return;
    }
}

static void turn(int fd, struct evbuffer *out, bool *eof)
{
    event_base_loop(base, EVLOOP_NONBLOCK);
    drain(fd, out, eof);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!base) {
        base = event_base_new();
        struct front_limits lim = {.max_body = 2048, .timeout_s = 60};
        front = front_new(base, &lim, &ops, NULL);
        rules = browser_new("127.0.0.1");
        if (!base || !front || !rules || keys_add(&keys, "token", "s3cret") ||
            keys_add(&keys, "alice", "KA"))
            abort();
    }
    nseen = 0;
    too_many = false;
    later = NULL;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
        return 0;
    if (front_adopt(front, sv[0]) < 0) {
        close(sv[1]);
        return 0;
    }
    struct evbuffer *out = evbuffer_new();
    bool eof = false;
    /* pieces of a size the input's length picks: requests split anywhere */
    size_t piece = 1 + size % 61, off = 0;
    for (unsigned spins = 0; off < size && !eof && spins < 100000; spins++) {
        size_t n = size - off < piece ? size - off : piece;
        ssize_t w = send(sv[1], data + off, n, MSG_NOSIGNAL);
        if (w > 0)
            off += (size_t)w;
        else if (w < 0 && errno != EAGAIN && errno != EINTR)
            break;
        turn(sv[1], out, &eof);
        if (later && spins % 2) {
            struct front_req *r = later;
            later = NULL;
            front_set_arg(r, NULL);
            front_reply(r, 200, NULL, NULL, 0, "later\n", 6);
        }
    }
    shutdown(sv[1], SHUT_WR); /* the client is done sending */
    for (unsigned spins = 0; !eof && spins < 1000; spins++)
        turn(sv[1], out, &eof);
    close(sv[1]);
    for (unsigned spins = 0; front_open(front) && spins < 100; spins++)
        event_base_loop(base, EVLOOP_NONBLOCK);
    if (front_open(front) || later)
        abort(); /* a connection outlived its client */
    size_t n = evbuffer_get_length(out);
    check((const char *)evbuffer_pullup(out, -1), n);
    evbuffer_free(out);
    return 0;
}
