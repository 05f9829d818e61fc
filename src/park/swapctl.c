/* swapctl: the client side of the fast-swap control line (ipc/swapline.h).
 * The socket is abstract (no file, gone with the process), so anyone could
 * bind a name first: the answer counts only if the peer really is the pid
 * asked for. */
#include "park/swapctl.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int swapctl_call(int pid, const char *req, unsigned timeout_ms, struct swapline_info *info,
                 char *err, size_t len)
{
    struct sockaddr_un a;
    socklen_t alen = swapline_address(pid, &a);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, len, "socket: %s", strerror(errno));
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&a, alen) < 0) {
        close(fd);
        return 0; /* nobody listens: no fast swap in that process */
    }
    struct ucred c;
    socklen_t cl = sizeof c;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &cl) < 0 || c.pid != pid) {
        close(fd);
        snprintf(err, len, "the fast-swap socket of pid %d belongs to pid %d; not trusted", pid,
                 (int)c.pid);
        return -1;
    }
    char buf[600];
    int n = snprintf(buf, sizeof buf, "%s\n", req);
    if (send(fd, buf, (size_t)n, MSG_NOSIGNAL) != n) {
        close(fd);
        snprintf(err, len, "pid %d: cannot send to its fast-swap socket", pid);
        return -1;
    }
    size_t got = 0;
    struct pollfd p = {fd, POLLIN, 0};
    while (got < sizeof buf - 1 && poll(&p, 1, (int)timeout_ms) == 1) {
        ssize_t r = recv(fd, buf + got, sizeof buf - 1 - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
        if (memchr(buf, '\n', got))
            break;
    }
    close(fd);
    buf[got] = 0;
    char *nl = strchr(buf, '\n');
    if (!nl) {
        snprintf(err, len, "pid %d did not answer '%s' within %u s", pid, req, timeout_ms / 1000);
        return -1;
    }
    *nl = 0;
    if (strncmp(buf, "ok", 2) == 0) {
        swapline_parse(buf + 2, info);
        return 1;
    }
    snprintf(err, len, "%s", strncmp(buf, "error ", 6) == 0 ? buf + 6 : buf);
    return -1;
}
