/* client: the control API over a Unix socket: one HTTP/1.1 request per
 * connection (http/ucall.c: the answer parsed by http-parser, the parser
 * the proxy uses too).
 *
 * libcurl did this before; it brought 30 shared libraries (TLS, Kerberos,
 * LDAP...) into every vram process, and loading them cost `vram status`
 * 4-6 ms of its start (bench/RESULTS.md, issue 18) for a socket that only
 * ever speaks plain HTTP to our own daemon. */
#include "cli/client.h"

#include <errno.h>
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
#include "http/ucall.h"

#define CLIENT_MAX_REPLY (16u << 20) /* a reply this large is not ours */

const char *client_socket(const char *explicit_path)
{
    if (explicit_path)
        return explicit_path;
    return paths_client_socket();
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
    struct ucall_answer a;
    long status = ucall_do(fd, method, path, text, text ? strlen(text) : 0, CLIENT_MAX_REPLY,
                           "vram serve", &a, err, len);
    if (status >= 0) {
        json_error_t je;
        *reply = a.body ? json_loads(a.body, 0, &je) : NULL;
        if (!*reply) {
            snprintf(err, len, "vram serve answered %ld with no JSON", status);
            status = -1;
        }
    }
    close(fd);
    free(text);
    free(a.body);
    return status;
}

long client_stream(const char *socket_path, const char *path, ucall_part_fn part, void *arg,
                   char *err, size_t len)
{
    int fd = dial(socket_path, err, len);
    if (fd < 0)
        return -1;
    long status = ucall_stream(fd, "GET", path, "vram serve", part, arg, err, len);
    close(fd);
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
