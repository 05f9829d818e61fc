/* pidref: the check is the kernel's own: a signal 0 through the pidfd
 * (pidfd_send_signal) is refused exactly when kill(2) would refuse to
 * signal that process, and it names the process held, not a pid. The
 * pidfd is opened before anything is read about the pid, and it becomes
 * readable when that process exits: what was read meanwhile was about it
 * if it has not. Without pidfds (older kernels, other PID namespaces) the
 * start time stands in: a pid reused within one clock tick is not seen. */
#include "host/pidref.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "host/proc.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

static int owner_of(int pid)
{
    char path[32];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d", pid);
    return stat(path, &st) == 0 ? (int)st.st_uid : -1;
}

int pidref_open(struct pidref *r, int pid, char *err, size_t len)
{
    r->pid = pid;
    r->fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (r->fd < 0 && errno == ESRCH) {
        snprintf(err, len, "no process %d", pid);
        return -1;
    }
    r->start = hostproc_start_ticks((uint32_t)pid);
    int rc = r->fd >= 0 ? (int)syscall(SYS_pidfd_send_signal, r->fd, 0, NULL, 0) : -1;
    if (r->fd < 0 || (rc < 0 && errno != EPERM && errno != ESRCH))
        rc = kill(pid, 0); /* no pidfds here, or not for this PID namespace */
    int e = errno;
    if (rc == 0 && r->start && pidref_same(r))
        return 0;
    if (rc < 0 && e == EPERM) {
        int uid = owner_of(pid);
        snprintf(err, len,
                 "pid %d is another user's (uid %d): vram suspends and resumes only your own "
                 "processes, as kill does (or any, as root)",
                 pid, uid);
    } else {
        snprintf(err, len, "no process %d", pid);
    }
    pidref_close(r);
    return -1;
}

bool pidref_same(const struct pidref *r)
{
    if (r->fd >= 0) {
        struct pollfd p = {r->fd, POLLIN, 0};
        if (poll(&p, 1, 0) != 0)
            return false; /* readable: it exited */
    }
    return r->start && hostproc_start_ticks((uint32_t)r->pid) == r->start;
}

int pidref_hold(struct pidref *r, int pid)
{
    r->pid = pid;
    r->fd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
    r->start = pid > 0 ? hostproc_start_ticks((uint32_t)pid) : 0;
    if (r->start && (r->fd >= 0 || errno != ESRCH))
        return 0;
    pidref_close(r);
    return -1;
}

bool pidref_end(const struct pidref *r, bool stopped, double grace)
{
    pidref_kill(r, SIGTERM);
    if (stopped)
        pidref_kill(r, SIGCONT);
    for (double w = 0; w < grace && pidref_same(r); w += 0.1) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (!pidref_same(r))
        return true;
    pidref_kill(r, SIGKILL);
    return false;
}

int pidref_kill(const struct pidref *r, int sig)
{
    if (r->fd >= 0)
        return (int)syscall(SYS_pidfd_send_signal, r->fd, sig, NULL, 0);
    /* no pidfd: the start time, checked just before, is all there is */
    if (!pidref_same(r))
        return errno = ESRCH, -1;
    return kill(r->pid, sig);
}

void pidref_close(struct pidref *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
}
