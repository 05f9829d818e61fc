/* errbody: error answers in the route's dialect.
 *
 * Ollama's clients read "error" as a string (an object shows as
 * "[object Object]"); OpenAI's read error.message and error.type, and
 * tools switch on error.code ("model_not_found"). The message may carry a
 * model's last log line, any bytes: it is escaped here, with invalid UTF-8
 * replaced, so that the answer is JSON whatever the log held. */
#include "http/errbody.h"

#include <stdbool.h>
#include <string.h>

static const struct {
    int status;
    const char *type, *code; /* OpenAI's; code NULL: null */
} kinds[] = {
    [ERRBODY_BAD_REQUEST] = {400, "invalid_request_error", NULL},
    [ERRBODY_UNAUTHORIZED] = {401, "authentication_error", "invalid_api_key"},
    [ERRBODY_FORBIDDEN] = {403, "permission_error", NULL},
    [ERRBODY_NO_MODEL] = {404, "not_found_error", "model_not_found"},
    [ERRBODY_NO_ROUTE] = {404, "not_found_error", "unknown_url"},
    [ERRBODY_TIMEOUT] = {408, "timeout_error", "request_timeout"},
    [ERRBODY_TOO_LARGE] = {413, "invalid_request_error", "request_too_large"},
    [ERRBODY_HEADERS_TOO_BIG] = {431, "invalid_request_error", "headers_too_large"},
    [ERRBODY_INTERNAL] = {500, "server_error", NULL},
    [ERRBODY_BACKEND] = {502, "server_error", "model_failed"},
    [ERRBODY_UNAVAILABLE] = {503, "service_unavailable", "model_unavailable"},
    [ERRBODY_METHOD] = {405, "invalid_request_error", "method_not_allowed"},
    [ERRBODY_MEDIA_TYPE] = {415, "invalid_request_error", "unsupported_media_type"},
    [ERRBODY_NOT_IMPLEMENTED] = {501, "invalid_request_error", "method_not_implemented"},
};

int errbody_status(enum errbody_kind kind)
{
    return (unsigned)kind < sizeof kinds / sizeof kinds[0] ? kinds[kind].status : 500;
}

struct out {
    char *p;
    size_t n, cap; /* cap: what the message may use, the end kept aside */
};

static void put(struct out *o, const char *s, size_t n)
{
    if (o->n + n > o->cap)
        return;
    memcpy(o->p + o->n, s, n);
    o->n += n;
}

/* The length of the valid UTF-8 sequence at s (of n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t k = s[0] < 0x80                   ? 1
               : s[0] >= 0xc2 && s[0] < 0xe0 ? 2
               : s[0] >= 0xe0 && s[0] < 0xf0 ? 3
               : s[0] >= 0xf0 && s[0] < 0xf5 ? 4
                                             : 0;
    if (!k || k > n)
        return 0;
    for (size_t i = 1; i < k; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    /* overlong three- and four-byte forms, surrogates, past U+10FFFF */
    if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
        (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
        return 0;
    return k;
}

/* msg as a JSON string's contents, whole sequences only. */
static void put_escaped(struct out *o, const char *msg)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)msg;
    size_t n = strlen(msg);
    for (size_t i = 0; i < n;) {
        size_t k = utf8_len(s + i, n - i);
        size_t before = o->n;
        if (!k) {
            put(o, "\xef\xbf\xbd", 3); /* U+FFFD */
            k = 1;
        } else if (s[i] == '"' || s[i] == '\\') {
            char e[2] = {'\\', (char)s[i]};
            put(o, e, 2);
        } else if (s[i] < 0x20 || s[i] == 0x7f) {
            char e[6] = {'\\', 'u', '0', '0', hex[s[i] >> 4], hex[s[i] & 15]};
            put(o, e, 6);
        } else {
            put(o, (const char *)s + i, k);
        }
        if (o->n == before) /* full: the message ends here */
            return;
        i += k;
    }
}

size_t errbody_render(enum errbody_dialect d, enum errbody_kind kind, const char *msg, char *buf,
                      size_t len)
{
    if ((unsigned)kind >= sizeof kinds / sizeof kinds[0])
        kind = ERRBODY_INTERNAL;
    char tail[128];
    size_t tn;
    if (d == ERRBODY_PLAIN) {
        memcpy(tail, "\"}\n", tn = 3);
    } else {
        const char *type = kinds[kind].type, *code = kinds[kind].code;
        struct out t = {tail, 0, sizeof tail};
        put(&t, "\",\"type\":\"", 10);
        put(&t, type, strlen(type));
        put(&t, "\",\"param\":null,\"code\":", 22);
        if (code) {
            put(&t, "\"", 1);
            put(&t, code, strlen(code));
            put(&t, "\"", 1);
        } else {
            put(&t, "null", 4);
        }
        put(&t, "}}\n", 3);
        tn = t.n;
    }
    struct out o = {buf, 0, len - tn - 1};
    if (d == ERRBODY_PLAIN)
        put(&o, "{\"error\":\"", 10);
    else
        put(&o, "{\"error\":{\"message\":\"", 21);
    put_escaped(&o, msg ? msg : "");
    memcpy(buf + o.n, tail, tn);
    buf[o.n + tn] = '\0';
    return o.n + tn;
}
