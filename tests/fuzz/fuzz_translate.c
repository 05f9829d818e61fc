/* Fuzz target: the proxy's API translation (proxy/translate.c, reply.c,
 * sse.c). The input is a client's request body, a NUL, then a backend's
 * answer; its first two bytes pick the route, the content type and how
 * the answer is cut into reads. A backend is a process of the machine's
 * users and may answer anything. Beyond not crashing, one property: the
 * client gets the same bytes however the answer was split across reads
 * (SSE or NDJSON events cut anywhere, CR LF cut in two). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/translate.h"

static const char *const types[] = {"text/event-stream", "application/x-ndjson", "application/json",
                                    NULL};

/* The answer through a fresh translation, in reads of the sizes cuts
 * gives (0: whole); what the client got, in out. */
static int run(enum translate_route route, json_t *req, int status, const char *type,
               const uint8_t *ans, size_t n, uint32_t cuts, struct evbuffer *out)
{
    struct translate *t;
    char uri[256];
    struct evbuffer *body = evbuffer_new();
    const char *why =
        translate_request(route, req, "m", 1700000000000ULL, 7, uri, sizeof uri, body, &t);
    evbuffer_free(body);
    if (why)
        return -1;
    translate_head(t, status, type);
    size_t at = 0;
    int rc = 0;
    while (at < n && rc == 0) {
        size_t step = cuts ? 1 + (cuts & 15) : n;
        cuts = cuts ? cuts * 1103515245u + 12345u : 0;
        if (step > n - at)
            step = n - at;
        rc = translate_body(t, (const char *)ans + at, step, 1000, out);
        at += step;
    }
    if (rc == 0)
        translate_end(t, 10, 20, 30, 2000, out);
    translate_free(t);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    enum translate_route route = (enum translate_route)(1 + data[0] % 7);
    const char *type = types[(data[1] >> 1) % 4];
    int status = data[1] & 1 ? 400 : 200;
    const uint8_t *rest = data + 2;
    size_t n = size - 2;
    const uint8_t *nul = memchr(rest, 0, n);
    size_t rl = nul ? (size_t)(nul - rest) : n;
    json_t *req = json_loadb((const char *)rest, rl, 0, NULL);
    if (!json_is_object(req)) {
        json_decref(req);
        req = json_pack("{s:s, s:b, s:[{s:s, s:s}], s:s}", "model", "m", "stream", data[1] & 8,
                        "messages", "role", "user", "content", "hi", "input", "x");
    }
    const uint8_t *ans = nul ? nul + 1 : rest + n;
    size_t an = nul ? n - rl - 1 : 0;
    struct evbuffer *a = evbuffer_new(), *b = evbuffer_new();
    uint32_t seed = (uint32_t)size * 2654435761u | 1;
    int ra = run(route, req, status, type, ans, an, 0, a);
    int rb = run(route, req, status, type, ans, an, seed, b);
    size_t la = evbuffer_get_length(a), lb = evbuffer_get_length(b);
    if (ra != rb || la != lb ||
        (la && memcmp(evbuffer_pullup(a, -1), evbuffer_pullup(b, -1), la)))
        abort(); /* the reads' boundaries changed what the client got (empty: pullup is NULL) */
    evbuffer_free(a);
    evbuffer_free(b);
    json_decref(req);
    return 0;
}
