/* swapctl: the client side. The socket is abstract (no file, gone with
 * the process), so anyone could bind a name first: the answer counts only
 * if the peer really is the pid asked for. */
#include "swapctl.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

socklen_t swapctl_address(int pid, struct sockaddr_un *a)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "vram-swap-%d", pid);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

void swapctl_parse(char *line, struct swapctl_info *in)
{
    memset(in, 0, sizeof *in);
    char *why = strstr(line, " why=");
    if (why) {
        snprintf(in->why, sizeof in->why, "%s", why + 5);
        *why = 0;
    }
    for (char *save = NULL, *t = strtok_r(line, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(t, '=');
        if (!eq)
            continue;
        *eq++ = 0;
        unsigned long long v = strtoull(eq, NULL, 10);
        if (strcmp(t, "state") == 0)
            snprintf(in->state, sizeof in->state, "%s", eq);
        else if (strcmp(t, "policy") == 0)
            snprintf(in->policy, sizeof in->policy, "%s", eq);
        else if (strcmp(t, "bytes") == 0)
            in->bytes = v;
        else if (strcmp(t, "pool") == 0)
            in->pool = v;
        else if (strcmp(t, "allocations") == 0)
            in->allocations = (unsigned)v;
        else if (strcmp(t, "gate_ms") == 0)
            in->gate_ms = v;
        else if (strcmp(t, "sync_ms") == 0)
            in->sync_ms = v;
        else if (strcmp(t, "pool_ms") == 0)
            in->pool_ms = v;
        else if (strcmp(t, "copy_ms") == 0)
            in->copy_ms = v;
    }
}

int swapctl_call(int pid, const char *req, unsigned timeout_ms, struct swapctl_info *info,
                 char *err, size_t len)
{
    struct sockaddr_un a;
    socklen_t alen = swapctl_address(pid, &a);
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
        swapctl_parse(buf + 2, info);
        return 1;
    }
    snprintf(err, len, "%s", strncmp(buf, "error ", 6) == 0 ? buf + 6 : buf);
    return -1;
}
