/* trust: see trust.h. Why the daemon's pid and not its user: the models of
 * one daemon share a user (vram-model, or the user of a user's daemon),
 * and a model that obeyed its user would obey every other model: one
 * connected to another's socket and sent `suspend` with memfds of its own,
 * and the other copied its whole GPU memory into them (issue 42). Why
 * undumpable: to every process of its user, a dumpable process's memory is
 * open (/proc/PID/mem, process_vm_readv, ptrace), and so are its
 * descriptors (/proc/PID/fd), the chunks that hold its suspended bytes
 * among them. Each check costs a system call or two per request, nothing
 * per byte moved. */
#include "shim/trust.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "host/proc.h"
#include "ipc/swapline.h"

/* set once, at load, before any thread of the library's runs */
static bool by_daemon;
static pid_t daemon_pid;
static unsigned long long daemon_start;

void trust_init(void)
{
    const char *v = getenv("VRAM_DAEMON");
    char *end;
    if (!v || !*v)
        return;
    long pid = strtol(v, &end, 10);
    if (*end != ':' || pid <= 1)
        return;
    unsigned long long start = strtoull(end + 1, &end, 10);
    if (*end || !start)
        return;
    by_daemon = true;
    daemon_pid = (pid_t)pid;
    daemon_start = start;
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

bool trust_by_daemon(void)
{
    return by_daemon;
}

bool trust_peer(int fd, char *why, size_t len)
{
    struct ucred c;
    socklen_t n = sizeof c;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &n) != 0 || n != sizeof c) {
        snprintf(why, len, "who asks is unknown");
        return false;
    }
    if (c.uid == 0)
        return true;
    if (!by_daemon) {
        if (c.uid == geteuid())
            return true;
        snprintf(why, len, "uid %u is another user: fast swap answers its own user and root",
                 (unsigned)c.uid);
        return false;
    }
    /* the daemon that started it: that pid, started then (not a process
     * that took its pid after it exited) */
    if (c.pid == daemon_pid && c.uid == geteuid() &&
        hostproc_start_ticks((uint32_t)c.pid) == daemon_start)
        return true;
    snprintf(why, len,
             "pid %d is not the vram serve that runs this model (pid %d): a model obeys its "
             "daemon only (vram suspend MODEL asks it)",
             (int)c.pid, (int)daemon_pid);
    return false;
}

int trust_chunk(int fd, char *err, size_t len)
{
    static const char want[] = "/memfd:" SWAPLINE_CHUNK_NAME " (deleted)";
    char path[40], target[sizeof want + 8];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n < 7 || strncmp(target, "/memfd:", 7) != 0) {
        snprintf(err, len, "a chunk of host memory that is not a memfd was passed");
        return -1;
    }
    int seals = fcntl(fd, F_GET_SEALS);
    int need = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
    if ((size_t)n != sizeof want - 1 || memcmp(target, want, sizeof want - 1) != 0 || seals < 0 ||
        (seals & need) != need) {
        snprintf(err, len,
                 "a memfd that is not the daemon's chunk of host memory (its name, its size "
                 "sealed) was passed");
        return -1;
    }
    return 0;
}
