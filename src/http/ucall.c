/* ucall: a request written whole, the answer read until the parser says
 * it is complete (or the other side closes: an answer without a length
 * ends there). */
#include "http/ucall.h"

#include <errno.h>
#include <http_parser.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

struct reading {
    struct ucall_answer *a;
    size_t max;
    bool done, too_big, stopped;
    ucall_part_fn part; /* the body handed over as it comes, else kept in a */
    void *arg;
};

static int on_body(http_parser *p, const char *at, size_t len)
{
    struct reading *r = p->data;
    if (r->part) {
        if (r->part(r->arg, (long)p->status_code, at, len) != 0) {
            r->stopped = true;
            return -1;
        }
        return 0;
    }
    if (r->a->n + len > r->max) {
        r->too_big = true;
        return -1;
    }
    char *nb = realloc(r->a->body, r->a->n + len + 1);
    if (!nb)
        return -1;
    memcpy(nb + r->a->n, at, len);
    r->a->body = nb;
    r->a->n += len;
    r->a->body[r->a->n] = '\0';
    return 0;
}

static int on_complete(http_parser *p)
{
    ((struct reading *)p->data)->done = true;
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

/* Reads the answer to its end: its status, or -1 with err. */
static long read_answer(int fd, struct reading *r, const char *who, char *err, size_t len)
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
            snprintf(err, len, "reading %s's answer: %s", who, strerror(errno));
            return -1;
        }
        size_t used = http_parser_execute(&p, &cb, buf, (size_t)got);
        if (r->stopped)
            return (long)p.status_code;
        if (HTTP_PARSER_ERRNO(&p) != HPE_OK || used != (size_t)got) {
            char big[32];
            snprintf(big, sizeof big, "larger than %zu MiB", r->max >> 20);
            snprintf(err, len, "%s's answer is not HTTP we understand (%s)", who,
                     r->too_big ? big : http_errno_description(HTTP_PARSER_ERRNO(&p)));
            return -1;
        }
        if (got == 0)
            break; /* told the parser the end came (an answer without a length ends here) */
    }
    if (!r->done) {
        snprintf(err, len, "%s closed the connection before its answer was complete", who);
        return -1;
    }
    return (long)p.status_code;
}

static int send_request(int fd, const char *method, const char *path, const char *body,
                        size_t len, const char *who, char *err, size_t errlen)
{
    char head[1024];
    int hl = snprintf(head, sizeof head,
                      "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                      "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
                      method, path, len);
    if (hl < 0 || (size_t)hl >= sizeof head) {
        snprintf(err, errlen, "the request for %s is too long", path);
        return -1;
    }
    if (send_all(fd, head, (size_t)hl) < 0 || (len && send_all(fd, body, len) < 0)) {
        snprintf(err, errlen, "sending to %s: %s", who, strerror(errno));
        return -1;
    }
    return 0;
}

long ucall_do(int fd, const char *method, const char *path, const char *body, size_t len,
              size_t max, const char *who, struct ucall_answer *a, char *err, size_t errlen)
{
    *a = (struct ucall_answer){0};
    if (send_request(fd, method, path, body, len, who, err, errlen) < 0)
        return -1;
    struct reading r = {.a = a, .max = max};
    long status = read_answer(fd, &r, who, err, errlen);
    if (status < 0) {
        free(a->body);
        *a = (struct ucall_answer){0};
    }
    return status;
}

long ucall_stream(int fd, const char *method, const char *path, const char *who,
                  ucall_part_fn part, void *arg, char *err, size_t errlen)
{
    if (send_request(fd, method, path, NULL, 0, who, err, errlen) < 0)
        return -1;
    struct ucall_answer a = {0};
    struct reading r = {.a = &a, .max = SIZE_MAX, .part = part, .arg = arg};
    return read_answer(fd, &r, who, err, errlen);
}
