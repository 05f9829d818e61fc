/* client: the control API over a Unix socket: one HTTP/1.1 request per
 * connection, the answer parsed by http-parser (Node's parser, which the
 * proxy uses too).
 *
 * libcurl did this before; it brought 30 shared libraries (TLS, Kerberos,
 * LDAP...) into every vram process, and loading them cost `vram status`
 * 4-6 ms of its start (bench/RESULTS.md, issue 18) for a socket that only
 * ever speaks plain HTTP to our own daemon. */
#include "cli/client.h"

#include <errno.h>
#include <http_parser.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "app/paths.h"
#include "app/render_json.h"
#include "core/modelname.h"
#include "core/textsafe.h"
#include "core/units.h"

#define CLIENT_MAX_REPLY (16u << 20) /* a reply this large is not ours */

const char *client_socket(const char *explicit_path)
{
    if (explicit_path)
        return explicit_path;
    return paths_client_socket();
}

struct reply {
    char *body;
    size_t n;
    bool done, too_big;
};

static int on_body(http_parser *p, const char *at, size_t len)
{
    struct reply *r = p->data;
    if (r->n + len > CLIENT_MAX_REPLY) {
        r->too_big = true;
        return -1;
    }
    char *nb = realloc(r->body, r->n + len + 1);
    if (!nb)
        return -1;
    memcpy(nb + r->n, at, len);
    r->body = nb;
    r->n += len;
    r->body[r->n] = '\0';
    return 0;
}

static int on_complete(http_parser *p)
{
    ((struct reply *)p->data)->done = true;
    return 0;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int dial(const char *socket_path, char *err, size_t len)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof a.sun_path) {
        snprintf(err, len, "the socket path %s is longer than a Unix socket allows (%zu bytes)",
                 socket_path, sizeof a.sun_path - 1);
        return -1;
    }
    memcpy(a.sun_path, socket_path, strlen(socket_path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        snprintf(err, len,
                 "cannot reach vram serve at %s (%s): is it running? (--socket PATH "
                 "or VRAM_SOCKET for another place)",
                 socket_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* Reads the answer to its end (the daemon closes after it: the request
 * said Connection: close). Returns the status, or -1 with err. */
static long read_reply(int fd, struct reply *r, char *err, size_t len)
{
    http_parser_settings cb;
    memset(&cb, 0, sizeof cb);
    cb.on_body = on_body;
    cb.on_message_complete = on_complete;
    http_parser p;
    http_parser_init(&p, HTTP_RESPONSE);
    p.data = r;
    char buf[16384];
    while (!r->done) {
        ssize_t got = recv(fd, buf, sizeof buf, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            snprintf(err, len, "reading vram serve's answer: %s", strerror(errno));
            return -1;
        }
        size_t used = http_parser_execute(&p, &cb, buf, (size_t)got);
        if (HTTP_PARSER_ERRNO(&p) != HPE_OK || used != (size_t)got) {
            snprintf(err, len, "vram serve's answer is not HTTP we understand (%s)",
                     r->too_big ? "larger than 16 MiB" : http_errno_description(HTTP_PARSER_ERRNO(&p)));
            return -1;
        }
        if (got == 0)
            break; /* told the parser the end came (an answer without a length ends here) */
    }
    if (!r->done) {
        snprintf(err, len, "vram serve closed the connection before its answer was complete");
        return -1;
    }
    return (long)p.status_code;
}

int client_model_path(const char *name, const char *verb, char *out, size_t len, char *err,
                      size_t errlen)
{
    const char *bad = modelname_check(name);
    char seg[MODELNAME_MAX * 3];
    if (bad) {
        snprintf(err, errlen, "model name '%.130s': %s", name, bad);
        return -1;
    }
    if (modelname_url(name, seg, sizeof seg) < 0 ||
        snprintf(out, len, "/v1/models/%s%s%s", seg, verb ? "/" : "", verb ? verb : "") >=
            (int)len) {
        snprintf(err, errlen, "model name '%.130s': too long", name);
        return -1;
    }
    return 0;
}

long client_call(const char *socket_path, const char *method, const char *path, json_t *body,
                 json_t **reply, char *err, size_t len)
{
    *reply = NULL;
    for (const char *c = path; *c; c++)
        if ((unsigned char)*c <= ' ' || *c == 0x7f) {
            snprintf(err, len, "'%s': a model name has no spaces or control characters", path);
            return -1;
        }
    int fd = dial(socket_path, err, len);
    if (fd < 0)
        return -1;
    char *text = body ? json_dumps(body, JSON_COMPACT | RENDER_JSON_REALS) : NULL;
    size_t tl = text ? strlen(text) : 0;
    char head[1024];
    int hl = snprintf(head, sizeof head,
                      "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                      "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                      method, path, tl);
    long status = -1;
    struct reply r = {0};
    if (hl < 0 || (size_t)hl >= sizeof head) {
        snprintf(err, len, "the request for %s is too long", path);
    } else if (send_all(fd, head, (size_t)hl) < 0 || (tl && send_all(fd, text, tl) < 0)) {
        snprintf(err, len, "sending to vram serve at %s: %s", socket_path, strerror(errno));
    } else if ((status = read_reply(fd, &r, err, len)) >= 0) {
        json_error_t je;
        *reply = r.body ? json_loads(r.body, 0, &je) : NULL;
        if (!*reply) {
            snprintf(err, len, "vram serve answered %ld with no JSON", status);
            status = -1;
        }
    }
    close(fd);
    free(text);
    free(r.body);
    return status;
}

int client_report(const char *verb, long st, json_t *r, const char *err)
{
    if (st < 0) {
        fprintf(stderr, "vram %s: %s\n", verb, err);
        return 1;
    }
    json_t *e = json_object_get(r, "error");
    /* the daemon's words carry a model's last log line and names: printed
     * through textsafe, like everything another party wrote */
    char safe[1024], safe2[64];
    if (st >= 300) {
        fprintf(stderr, "vram %s: %s\n", verb,
                json_is_string(e) ? textsafe_copy(json_string_value(e), SIZE_MAX, safe, sizeof safe)
                                  : "?");
        return st == 404 || st == 400 ? 2 : 1;
    }
    char b[32];
    json_t *g = json_object_get(r, "gpu");
    const char *name = json_string_value(json_object_get(r, "name")),
               *state = json_string_value(json_object_get(r, "state"));
    printf("%s: %s", textsafe_copy(name ? name : "?", SIZE_MAX, safe, sizeof safe),
           textsafe_copy(state ? state : "?", SIZE_MAX, safe2, sizeof safe2));
    if (json_is_integer(g))
        printf(" on GPU %lld, %s", (long long)json_integer_value(g),
               units_fmt_size((uint64_t)json_integer_value(json_object_get(r, "vram_bytes")), b,
                              sizeof b));
    if (json_is_integer(json_object_get(r, "port")))
        printf(", port %lld", (long long)json_integer_value(json_object_get(r, "port")));
    putchar('\n');
    return 0;
}
