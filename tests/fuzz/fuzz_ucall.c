/* Fuzz target: the CLI's reading of the control API's answers
 * (http/ucall.c, http-parser underneath): the input is what the other end
 * of the socket says, whole, then its end. Whatever it says, ucall_do
 * returns a status with a body no larger than its limit and
 * NUL-terminated, or -1 with a message and no body. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http/ucall.h"

#define MAX_BODY 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int sv[2];
    if (size > 65536 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        return 0;
    size_t at = 0;
    while (at < size) { /* fits the socket's buffer: the answer waits whole */
        ssize_t w = write(sv[1], data + at, size - at);
        if (w <= 0)
            break;
        at += (size_t)w;
    }
    shutdown(sv[1], SHUT_WR);
    struct ucall_answer a;
    char err[256] = "";
    long st = ucall_do(sv[0], "POST", "/v1/models/x/load", "{}", 2, MAX_BODY, "fuzz", &a, err,
                       sizeof err);
    if (st < 0) {
        assert(!a.body && !a.n && err[0]);
    } else {
        assert(a.n <= MAX_BODY);
        assert(!a.body || a.body[a.n] == '\0');
    }
    free(a.body);
    close(sv[0]);
    close(sv[1]);
    return 0;
}
