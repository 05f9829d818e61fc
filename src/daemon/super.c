/* super: starting, signalling and watching model processes.
 *
 * Each model runs in its own session (setsid), so that a stop reaches
 * whatever its command started (a wrapper script and its server). The
 * daemon never sets a parent-death signal: if it dies, its models live on
 * and the next daemon adopts them. */
#include "daemon/super.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/proc.h"

/* command with every ${PORT} replaced by port, behind "exec ". */
static int expand(const char *cmd, unsigned port, char *out, size_t len)
{
    size_t at = (size_t)snprintf(out, len, "exec ");
    char p[16];
    snprintf(p, sizeof p, "%u", port);
    for (const char *c = cmd; *c; c++) {
        const char *add = NULL;
        size_t n = 1;
        if (!strncmp(c, "${PORT}", 7)) {
            add = p;
            n = strlen(p);
            c += 6;
        }
        if (at + n >= len)
            return -1;
        memcpy(out + at, add ? add : c, n);
        at += n;
    }
    out[at] = '\0';
    return 0;
}

int super_start(const struct super_spawn *s, pid_t *pid, uint64_t *start_ticks, char *err,
                size_t len)
{
    char cmd[2048], log[1024], port[16], cap[32], hmax[32];
    if (expand(s->command, s->port, cmd, sizeof cmd) < 0) {
        snprintf(err, len, "command too long");
        return -1;
    }
    mkdir(s->logdir, 0755);
    snprintf(log, sizeof log, "%s/%s.log", s->logdir, s->name);
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, len, "cannot open its log %s: %s", log, strerror(errno));
        return -1;
    }
    snprintf(port, sizeof port, "%u", s->port);
    snprintf(cap, sizeof cap, "%llu", (unsigned long long)s->cap);
    snprintf(hmax, sizeof hmax, "%llu", (unsigned long long)s->swap_host_max);
    pid_t p = fork();
    if (p < 0) {
        snprintf(err, len, "fork: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (p == 0) {
        setsid();
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0)
            dup2(nul, STDIN_FILENO);
        setenv("PORT", port, 1);
        setenv("VRAM_MODEL", s->name, 1);
        if (s->gpu_uuid)
            setenv("CUDA_VISIBLE_DEVICES", s->gpu_uuid, 1);
        if (s->shim)
            setenv("LD_PRELOAD", s->shim, 1);
        if (s->shim && s->cap)
            setenv("VRAM_CAP", cap, 1);
        if (s->shim && s->fast) {
            setenv("VRAM_SWAP", "1", 1);
            if (s->swap_pool && *s->swap_pool)
                setenv("VRAM_SWAP_POOL", s->swap_pool, 1);
            if (s->swap_host_max)
                setenv("VRAM_SWAP_HOST_MAX", hmax, 1);
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(fd);
    *pid = p;
    /* the child's start time: it exists from fork on */
    *start_ticks = hostproc_start_ticks((uint32_t)p);
    return 0;
}

void super_signal(pid_t pid, int sig)
{
    if (pid <= 1)
        return;
    if (kill(-pid, sig) < 0)
        kill(pid, sig); /* not a group leader (an adopted process): the process itself */
}

bool super_alive(pid_t pid, uint64_t start_ticks)
{
    if (pid <= 1)
        return false;
    uint64_t now = hostproc_start_ticks((uint32_t)pid);
    return now && (!start_ticks || now == start_ticks);
}

void super_last_log(const char *logdir, const char *name, char *out, size_t len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.log", logdir, name);
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char buf[4096];
    if (fseek(f, -(long)(sizeof buf - 1), SEEK_END) < 0)
        rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    char *last = strrchr(buf, '\n');
    snprintf(out, len, "%s", last ? last + 1 : buf);
}

unsigned super_free_port(unsigned from, const bool *taken, size_t ntaken)
{
    for (unsigned p = from; p < from + 2000 && p < 65535; p++) {
        if (p - from < ntaken && taken[p - from])
            continue;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return 0;
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
        close(fd);
        if (ok)
            return p;
    }
    return 0;
}
