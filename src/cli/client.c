/* client: the control API over a Unix socket, with libcurl.
 *
 * libevent 2.1 (what Debian 12 and Ubuntu 24.04 ship) has an HTTP server
 * that listens on Unix sockets but no client that connects to one (2.2
 * adds it); libcurl does, and parses the replies, so vram parses no HTTP. */
#include "cli/client.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"

const char *client_socket(const char *explicit_path)
{
    if (explicit_path)
        return explicit_path;
    const char *e = getenv("VRAM_SOCKET");
    return e && *e ? e : "/run/vram/vram.sock";
}

struct buf {
    char *p;
    size_t n;
};

static size_t take(char *data, size_t size, size_t n, void *arg)
{
    struct buf *b = arg;
    size_t add = size * n;
    if (b->n + add > (16u << 20))
        return 0; /* a reply this large is not ours */
    char *np = realloc(b->p, b->n + add + 1);
    if (!np)
        return 0;
    memcpy(np + b->n, data, add);
    b->p = np;
    b->n += add;
    b->p[b->n] = '\0';
    return add;
}

long client_call(const char *socket, const char *method, const char *path, json_t *body,
                 json_t **reply, char *err, size_t len)
{
    *reply = NULL;
    CURL *c = curl_easy_init();
    if (!c) {
        snprintf(err, len, "cannot start libcurl");
        return -1;
    }
    char url[512];
    snprintf(url, sizeof url, "http://localhost%s", path);
    struct buf b = {NULL, 0};
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, socket);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, text ? text : (strcmp(method, "POST") ? NULL : ""));
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, take);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    CURLcode rc = curl_easy_perform(c);
    long status = -1;
    if (rc != CURLE_OK) {
        snprintf(err, len,
                 "cannot reach vram serve at %s (%s): is it running? (--socket PATH "
                 "or VRAM_SOCKET for another place)",
                 socket, curl_easy_strerror(rc));
    } else {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        json_error_t je;
        *reply = b.p ? json_loads(b.p, 0, &je) : NULL;
        if (!*reply) {
            snprintf(err, len, "vram serve answered %ld with no JSON", status);
            status = -1;
        }
    }
    curl_slist_free_all(h);
    free(text);
    free(b.p);
    curl_easy_cleanup(c);
    return status;
}

int client_report(const char *verb, long st, json_t *r, const char *err)
{
    if (st < 0) {
        fprintf(stderr, "vram %s: %s\n", verb, err);
        return 1;
    }
    json_t *e = json_object_get(r, "error");
    if (st >= 300) {
        fprintf(stderr, "vram %s: %s\n", verb, json_is_string(e) ? json_string_value(e) : "?");
        return st == 404 || st == 400 ? 2 : 1;
    }
    char b[32];
    json_t *g = json_object_get(r, "gpu");
    printf("%s: %s", json_string_value(json_object_get(r, "name")),
           json_string_value(json_object_get(r, "state")));
    if (json_is_integer(g))
        printf(" on GPU %lld, %s", (long long)json_integer_value(g),
               units_fmt_size((uint64_t)json_integer_value(json_object_get(r, "vram_bytes")), b,
                              sizeof b));
    if (json_is_integer(json_object_get(r, "port")))
        printf(", port %lld", (long long)json_integer_value(json_object_get(r, "port")));
    putchar('\n');
    return 0;
}
