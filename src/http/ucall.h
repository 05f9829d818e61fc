/* ucall: one HTTP/1.1 request on a connected stream socket, blocking, for
 * a command line that waits for its answer anyway (the CLI's calls to the
 * control API, cli/client.c): Connection: close, the answer read to its
 * end by http-parser (the parser every answer the product reads goes
 * through), its body kept up to a limit. */
#ifndef VRAM_HTTP_UCALL_H
#define VRAM_HTTP_UCALL_H

#include <stddef.h>

/* The answer's body: NUL-terminated, n bytes; the caller frees body. */
struct ucall_answer {
    char *body;
    size_t n;
};

/* Sends method path (Host: localhost) with body (len bytes, as
 * Content-Type: application/json; len 0: none) on fd and reads the answer,
 * at most max bytes of body. Returns its status, or -1 with err (who: how
 * the messages name the other side, "vram serve"). fd stays open. */
long ucall_do(int fd, const char *method, const char *path, const char *body, size_t len,
              size_t max, const char *who, struct ucall_answer *a, char *err, size_t errlen);

/* One part of an answer's body as it arrives, with the answer's status:
 * 0 to go on, else the reading stops there. */
typedef int (*ucall_part_fn)(void *arg, long status, const char *data, size_t n);

/* Sends method path as ucall_do does (no body) and hands the answer's
 * body to part as it comes, for an answer that goes on (a followed log,
 * events), until it ends, the other side closes, or part says stop.
 * Returns its status, or -1 with err. */
long ucall_stream(int fd, const char *method, const char *path, const char *who,
                  ucall_part_fn part, void *arg, char *err, size_t errlen);

#endif
