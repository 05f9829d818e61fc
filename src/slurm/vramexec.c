/* vramexec: vram as the plugin's child.
 *
 * The child becomes the user completely (real, effective and saved ids,
 * and the job's groups) before exec: slurmstepd has only set its
 * effective uid when the step's user callbacks run, and a program started
 * with a real uid of 0 would keep root's capabilities and have the loader
 * ignore LD_LIBRARY_PATH. Between fork and exec only async-signal-safe
 * calls: slurmstepd has threads. */
#include "slurm/vramexec.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void child_fail(const char *what)
{
    static const char head[] = "error cannot run vram: ";
    ssize_t w = write(STDOUT_FILENO, head, sizeof head - 1);
    w = write(STDOUT_FILENO, what, strlen(what));
    w = write(STDOUT_FILENO, "\n", 1);
    (void)w;
    _exit(127);
}

/* In the child: the user's ids, the pipes as 0, 1, 2, nothing else open. */
static void child(char *const argv[], char *const envp[], const struct vramexec_as *as, int in,
                  int out)
{
    if (dup2(out, STDOUT_FILENO) < 0 || dup2(out, STDERR_FILENO) < 0 || dup2(in, STDIN_FILENO) < 0)
        _exit(127);
    if (as->change) {
        /* back to root first where only the effective uid was dropped */
        if (geteuid() != 0 && seteuid(0) < 0)
            child_fail("the plugin cannot take the job's user (not root)");
        if (setgroups((size_t)as->ngroups, as->groups) < 0 ||
            setresgid(as->gid, as->gid, as->gid) < 0 || setresuid(as->uid, as->uid, as->uid) < 0)
            child_fail("the plugin cannot take the job's user and groups");
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    /* slurmstepd's own descriptors are not vram's */
    if (syscall(SYS_close_range, 3U, ~0U, 0U) < 0)
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
    execve(argv[0], argv, envp);
    child_fail(errno == ENOENT    ? "no such file (is vram installed on this node?)"
               : errno == EACCES ? "permission denied (the job's user may not run it)"
                                 : "exec failed");
}

int vramexec_start(struct vramexec *x, char *const argv[], char *const envp[],
                   const struct vramexec_as *as, char *err, size_t errlen)
{
    memset(x, 0, sizeof *x);
    x->pid = -1;
    x->to = x->from = -1;
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    if (pipe2(out, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        close(in[0]);
        close(in[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0)
        child(argv, envp, as, in[0], out[1]);
    int e = errno;
    close(in[0]);
    close(out[1]);
    if (pid < 0) {
        close(in[1]);
        close(out[0]);
        snprintf(err, errlen, "fork: %s", strerror(e));
        return -1;
    }
    x->pid = pid;
    x->to = in[1];
    x->from = out[0];
    return 0;
}

int vramexec_line(struct vramexec *x, char *line, size_t len, int ms)
{
    long long until = now_ms() + ms;
    for (;;) {
        char *nl = memchr(x->buf, '\n', x->have);
        /* a line longer than the buffer is cut where the buffer ends */
        if (nl || x->have == sizeof x->buf || (x->from < 0 && x->have)) {
            size_t n = nl ? (size_t)(nl - x->buf) : x->have;
            size_t keep = n < len ? n : len - 1;
            memcpy(line, x->buf, keep);
            line[keep] = '\0';
            size_t used = nl ? n + 1 : n;
            memmove(x->buf, x->buf + used, x->have - used);
            x->have -= used;
            return 1;
        }
        if (x->from < 0)
            return 0;
        long long left = until - now_ms();
        if (left <= 0)
            return -1;
        struct pollfd p = {x->from, POLLIN, 0};
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        ssize_t got = read(x->from, x->buf + x->have, sizeof x->buf - x->have);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got <= 0) {
            close(x->from);
            x->from = -1;
            continue;
        }
        x->have += (size_t)got;
    }
}

void vramexec_close_input(struct vramexec *x)
{
    if (x->to >= 0)
        close(x->to);
    x->to = -1;
}

int vramexec_end(struct vramexec *x, int ms)
{
    vramexec_close_input(x);
    if (x->from >= 0)
        close(x->from);
    x->from = -1;
    if (x->pid <= 0)
        return -1;
    int status = -1;
    long long until = now_ms() + ms;
    for (;;) {
        pid_t r = waitpid(x->pid, &status, WNOHANG);
        if (r == x->pid)
            break;
        if (r < 0 && errno != EINTR) {
            status = -1; /* reaped by slurmstepd's own wait */
            break;
        }
        if (now_ms() >= until) {
            kill(x->pid, SIGKILL);
            if (waitpid(x->pid, &status, 0) != x->pid)
                status = -1;
            break;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    x->pid = -1;
    return status;
}
