/* swapctl: the client side of the fast-swap control line (ipc/swapline.h).
 * The socket is abstract (no file, gone with the process), so anyone could
 * bind a name first: an answer counts only from a peer that is the pid
 * asked for, run by that process's user. When another took the name, the
 * process listens on "vram-swap-PID.NONCE": that one is found in the
 * kernel's list of Unix sockets (/proc/PID/net/unix) among the ones the
 * process itself holds (/proc/PID/fd, readable by its user and root, the
 * only ones it answers anyway; by root alone for a model of vram serve,
 * which is undumpable: a user's daemon tries the names it finds, each
 * taken only from a peer that is pid). Connecting never waits: a squatter
 * that never accepts would otherwise hold the client at connect(). */
#include "move/swapctl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_TRIES 8 /* names to try when the process's own sockets cannot be listed */

/* A connection to a, if its peer is pid run by pid's user; else -1, and
 * *squatted when someone else listens there. */
static int connect_to(int pid, const struct sockaddr_un *a, socklen_t alen, int patience,
                      bool *squatted, int *who)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    int rc, tries = 0;
    /* EAGAIN: a listener's backlog is full, for a moment (a real one
     * accepts) or for good (a squatter that never does) */
    while ((rc = connect(fd, (const struct sockaddr *)a, alen)) < 0 && errno == EAGAIN &&
           tries++ < patience)
        poll(NULL, 0, 50);
    if (rc < 0) {
        *squatted |= errno == EAGAIN;
        close(fd);
        return -1;
    }
    struct ucred c = {0};
    socklen_t cl = sizeof c;
    char proc[32];
    struct stat st;
    snprintf(proc, sizeof proc, "/proc/%d", pid);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &cl) < 0 || c.pid != pid ||
        stat(proc, &st) < 0 || c.uid != st.st_uid) {
        *squatted = true;
        *who = cl == sizeof c ? (int)c.pid : 0;
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Whether pid holds the socket with this inode; -1 when its descriptors
 * cannot be listed. */
static int holds(int pid, unsigned long ino)
{
    char dir[32], path[300], link[64], want[40];
    snprintf(dir, sizeof dir, "/proc/%d/fd", pid);
    snprintf(want, sizeof want, "socket:[%lu]", ino);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d))) {
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ssize_t n = readlink(path, link, sizeof link - 1);
        if (n > 0) {
            link[n] = '\0';
            found = !strcmp(link, want);
        }
    }
    closedir(d);
    return found;
}

/* The fallback name pid listens on, connected; -1 when there is none. */
static int connect_alt(int pid, bool *squatted, int *who)
{
    char path[48], prefix[40], line[512];
    snprintf(path, sizeof path, "/proc/%d/net/unix", pid);
    int pl = snprintf(prefix, sizeof prefix, "@" SWAPLINE_NAME "%d.", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    int fd = -1, tries = 0;
    /* Num RefCount Protocol Flags Type St Inode Path: a listener is state 01 */
    while (fd < 0 && tries < MAX_TRIES && fgets(line, sizeof line, f)) {
        unsigned long ino;
        unsigned st;
        char name[120];
        if (sscanf(line, "%*s %*s %*s %*s %*s %x %lu %119s", &st, &ino, name) != 3 ||
            strncmp(name, prefix, (size_t)pl) != 0 || st != 1)
            continue;
        int h = holds(pid, ino);
        if (h == 0)
            continue; /* a squatter's, under a name like its own */
        tries += h < 0;
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        size_t n = strlen(name); /* '@' stands for the leading NUL */
        if (n > sizeof a.sun_path)
            continue;
        memcpy(a.sun_path + 1, name + 1, n - 1);
        fd = connect_to(pid, &a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n), 20,
                        squatted, who);
    }
    fclose(f);
    return fd;
}

/* Sends the line n bytes long, with nfds descriptors alongside it. */
static bool send_line(int fd, const char *buf, size_t n, const int *fds, unsigned nfds)
{
    union {
        char b[CMSG_SPACE(SWAPLINE_MAX_CHUNKS * sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {(void *)buf, n};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds > SWAPLINE_MAX_CHUNKS)
        return false;
    if (nfds) {
        memset(&ctl, 0, sizeof ctl);
        m.msg_control = ctl.b;
        m.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
        memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
    }
    ssize_t w;
    do
        w = sendmsg(fd, &m, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    return w == (ssize_t)n;
}

int swapctl_call(int pid, const char *req, unsigned timeout_ms, struct swapline_info *info,
                 char *err, size_t len)
{
    return swapctl_call_fds(pid, req, NULL, 0, timeout_ms, info, err, len);
}

int swapctl_call_fds(int pid, const char *req, const int *fds, unsigned nfds, unsigned timeout_ms,
                     struct swapline_info *info, char *err, size_t len)
{
    struct sockaddr_un a;
    socklen_t alen = swapline_address(pid, &a);
    bool squatted = false;
    int who = 0;
    int fd = connect_to(pid, &a, alen, 0, &squatted, &who);
    if (fd < 0)
        fd = connect_alt(pid, &squatted, &who);
    if (fd < 0 && squatted && !who) /* full, and no other name: wait a second for it */
        fd = connect_to(pid, &a, alen, 20, &squatted, &who);
    if (fd < 0 && !squatted)
        return 0; /* nobody listens: no fast swap in that process */
    if (fd < 0) {
        if (who)
            snprintf(err, len, "the fast-swap socket of pid %d belongs to pid %d; not trusted", pid,
                     who);
        else
            snprintf(err, len, "the fast-swap socket of pid %d is another process's; not trusted",
                     pid);
        return -1;
    }
    char buf[600];
    int n = snprintf(buf, sizeof buf, "%s\n", req);
    /* one that refuses answers why before it reads, and closes: the send
     * may fail then, and the answer still be there to read */
    bool sent = send_line(fd, buf, (size_t)n, fds, nfds);
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
    if (!nl && !sent) {
        snprintf(err, len, "pid %d: cannot send to its fast-swap socket", pid);
        return -1;
    }
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
