/* super: starting, signalling and watching model processes.
 *
 * Each model runs in its own session (setsid) and, where it can, its own
 * cgroup, and carries a tag in its environment (host/family.h), so that a
 * stop reaches whatever its command started (a wrapper script and its
 * server, workers that left the group). The daemon never sets a
 * parent-death signal: if it dies, its models live on and the next daemon
 * adopts them. A model's process runs its command only once the daemon has
 * recorded it (super_go): a daemon killed between the fork and its record
 * leaves no model behind that the next one could not find. It runs as its
 * user (conf/confuser.h): the switch is made in the child, after it joined
 * its cgroup (root's to make) and before it runs anything of the model's;
 * a child that cannot switch, or whose user cannot read libvramcap (the
 * loader would skip it without a word, and the model would run uncapped),
 * says so in its log and exits. */
#include "daemon/super.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/modelname.h"
#include "host/family.h"
#include "host/proc.h"

/* command with every ${PORT} replaced by port, behind "exec " (the
 * model's process is its server's); a stop command's (pid not 0) with
 * ${PID} replaced by pid too, as it is (a shell's list: "a; b"). */
static int expand(const char *cmd, unsigned port, pid_t pid, char *out, size_t len)
{
    size_t at = (size_t)snprintf(out, len, "%s", pid ? "" : "exec ");
    char p[16], q[16];
    snprintf(p, sizeof p, "%u", port);
    snprintf(q, sizeof q, "%d", (int)pid);
    for (const char *c = cmd; *c; c++) {
        const char *add = NULL;
        size_t n = 1;
        if (!strncmp(c, "${PORT}", 7)) {
            add = p;
            n = strlen(p);
            c += 6;
        } else if (pid > 0 && !strncmp(c, "${PID}", 6)) {
            add = q;
            n = strlen(q);
            c += 5;
        }
        if (at + n >= len)
            return -1;
        memcpy(out + at, add ? add : c, n);
        at += n;
    }
    out[at] = '\0';
    return 0;
}

/* The child's environment, built before the fork: between fork and exec a
 * multithreaded process (the daemon has worker threads) may call only
 * async-signal-safe functions, which setenv and malloc are not. */
struct env {
    char **v;
    size_t n, cap;
};

static int env_put(struct env *e, const char *name, const char *value)
{
    size_t nl = strlen(name);
    for (size_t i = 0; i < e->n; i++)
        if (!strncmp(e->v[i], name, nl) && e->v[i][nl] == '=') {
            free(e->v[i]);
            e->v[i] = e->v[--e->n]; /* ours replaces it */
            break;
        }
    if (e->n + 2 > e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 64;
        char **v = realloc(e->v, cap * sizeof *v);
        if (!v)
            return -1;
        e->v = v;
        e->cap = cap;
    }
    size_t len = nl + strlen(value) + 2;
    char *kv = malloc(len);
    if (!kv)
        return -1;
    snprintf(kv, len, "%s=%s", name, value);
    e->v[e->n++] = kv;
    e->v[e->n] = NULL;
    return 0;
}

extern char **environ;

static int env_build(struct env *e, const struct super_spawn *s, const char *port)
{
    char num[48];
    memset(e, 0, sizeof *e);
    for (char **v = environ; *v; v++) { /* a copy, so that ours can be freed alike */
        const char *eq = strchr(*v, '=');
        char name[256];
        if (!eq || (size_t)(eq - *v) >= sizeof name)
            continue;
        memcpy(name, *v, (size_t)(eq - *v));
        name[eq - *v] = '\0';
        if (env_put(e, name, eq + 1) < 0)
            return -1;
    }
    /* the model's own, before vram's: the names vram sets are its own
     * (config.c refuses them in env =) */
    const char *kv = s->env;
    for (unsigned i = 0; kv && i < s->nenv; i++, kv += strlen(kv) + 1) {
        const char *eq = strchr(kv, '=');
        char name[256];
        if (!eq || (size_t)(eq - kv) >= sizeof name)
            continue;
        memcpy(name, kv, (size_t)(eq - kv));
        name[eq - kv] = '\0';
        if (env_put(e, name, eq + 1) < 0)
            return -1;
    }
    int rc = env_put(e, "PORT", port) | env_put(e, "VRAM_MODEL", s->name) |
             /* the child writes its pid here (family_join) */
             env_put(e, FAMILY_ENV, "0000000000");
    if (s->gpu_uuid)
        rc |= env_put(e, "CUDA_VISIBLE_DEVICES", s->gpu_uuid);
    if (s->shim) {
        rc |= env_put(e, "LD_PRELOAD", s->shim);
        /* the process libvramcap obeys (shim/trust.h): this one, by pid and
         * start time, so that a pid reused after it exits is not it */
        snprintf(num, sizeof num, "%d:%llu", (int)getpid(),
                 (unsigned long long)hostproc_start_ticks((uint32_t)getpid()));
        rc |= env_put(e, "VRAM_DAEMON", num);
    }
    if (s->run && s->run->on)
        rc |= env_put(e, "HOME", s->run->home) | env_put(e, "USER", s->run->name) |
              env_put(e, "LOGNAME", s->run->name);
    if (s->shim && s->cap && s->cap_group) {
        rc |= env_put(e, "VRAM_CAP_GROUP", s->cap_group);
    } else if (s->shim && s->cap) {
        snprintf(num, sizeof num, "%llu", (unsigned long long)s->cap);
        rc |= env_put(e, "VRAM_CAP", num);
    }
    if (s->shim && s->fast) {
        rc |= env_put(e, "VRAM_SWAP", "1");
        if (s->swap_pool && *s->swap_pool)
            rc |= env_put(e, "VRAM_SWAP_POOL", s->swap_pool);
        if (s->swap_host_max) {
            snprintf(num, sizeof num, "%llu", (unsigned long long)s->swap_host_max);
            rc |= env_put(e, "VRAM_SWAP_HOST_MAX", num);
        }
        if (s->by_daemon)
            rc |= env_put(e, "VRAM_SWAP_DAEMON", "1");
    }
    return rc ? -1 : 0;
}

static void env_free(struct env *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->v[i]);
    free(e->v);
}

/* Everything but stdin, stdout, stderr closed in the
 * child: a model inherits no socket, pipe or file of the daemon's, whatever
 * a library opened without close-on-exec. */
static void close_from(int first)
{
    if (syscall(SYS_close_range, (unsigned)first, ~0U, 0) == 0)
        return;
    long max = sysconf(_SC_OPEN_MAX);
    for (int fd = first; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
        close(fd);
}

/* In the child: fds[k] as descriptor 3 + k, open across exec, and every
 * other descriptor from 3 closed. Each is first copied above the range,
 * so that none is overwritten before it is placed. */
static void pass_fds(const int *fds, unsigned n)
{
    int high[64];
    if (n > 64)
        n = 64;
    for (unsigned k = 0; k < n; k++)
        high[k] = fcntl(fds[k], F_DUPFD, (int)(3 + n));
    for (unsigned k = 0; k < n; k++)
        dup2(high[k], (int)(3 + k)); /* without FD_CLOEXEC */
    close_from((int)(3 + n));
}

/* The logs hold what the models write, prompts and answers included:
 * they are for the daemon's user and the control socket's group (api.c
 * gives the socket to group vram where it exists), who may read them
 * through the socket anyway; no one else. */
static gid_t socket_group(void)
{
    struct group *g = getgrnam("vram");
    return g ? g->gr_gid : (gid_t)-1;
}

/* fd's file or folder, if this user's, to mode and the socket's group (a
 * user not in it keeps their own group). */
static void restrict_to(int fd, mode_t mode)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_uid != geteuid())
        return;
    gid_t gid = socket_group();
    if (gid != (gid_t)-1 && st.st_gid != gid && fchown(fd, (uid_t)-1, gid) < 0) {
        /* not a member of it: the file stays in the user's own group */
    }
    if ((st.st_mode & 07777) != mode)
        fchmod(fd, mode);
}

/* Whether the folder holds only logs (a folder of an older version, 0755):
 * only then is it closed to others, never a folder of the system's that a
 * configuration named (logs = /var/log). */
static bool only_logs(int dfd)
{
    int fd = dup(dfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return false;
    }
    bool only = true;
    struct dirent *e;
    while (only && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        only = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
               (n > 4 && !strcmp(e->d_name + n - 4, ".log"));
    }
    closedir(d);
    return only;
}

/* The model's log, to append to: 0640 in a folder others cannot enter
 * (0750), both the socket's group's. */
static int open_log(const char *logdir, const char *path)
{
    bool made = mkdir(logdir, 0750) == 0;
    int dfd = open(logdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (dfd >= 0 && fstat(dfd, &st) == 0 &&
        (made || (!(st.st_mode & (S_ISVTX | 022)) && only_logs(dfd))))
        restrict_to(dfd, 0750);
    if (dfd >= 0)
        close(dfd);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0640);
    if (fd >= 0)
        restrict_to(fd, 0640);
    return fd;
}

/* What a child that cannot run as its user writes in its log, made
 * before the fork (snprintf is not for a child of threads). */
struct refusal {
    char user[300], shim[700];
};

static void refusal_make(struct refusal *f, const struct runas *run, const char *shim)
{
    f->user[0] = f->shim[0] = '\0';
    if (!run || !run->on)
        return;
    snprintf(f->user, sizeof f->user,
             "vram serve: cannot run this model as user %s (uid %u, group %s): not started\n",
             run->name, (unsigned)run->uid, run->group);
    if (shim)
        snprintf(f->shim, sizeof f->shim,
                 "vram serve: user %s cannot read libvramcap (%s): the model would run without "
                 "its cap and fast swap, so it is not started; make it readable to that user\n",
                 run->name, shim);
}

/* In the child: becomes the model's user, or exits saying why. */
static void become(const struct runas *run, const char *shim, const struct refusal *f, int log)
{
    if (!run || !run->on)
        return;
    const char *why = NULL;
    if (runas_become(run) < 0) {
        why = f->user;
    } else if (shim) {
        int fd = open(shim, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            why = f->shim;
        else
            close(fd);
    }
    if (!why)
        return;
    ssize_t w = write(log, why, strlen(why));
    (void)w;
    _exit(SUPER_NO_USER);
}

/* In the child: until the daemon has recorded it (super_go), it runs
 * nothing of the model's; EOF (the daemon died first) ends it. */
static void await_go(int rd)
{
    char c;
    ssize_t n;
    while ((n = read(rd, &c, 1)) < 0 && errno == EINTR)
        ;
    if (n != 1)
        _exit(SUPER_NOT_RELEASED);
    close(rd);
}

int super_start(const struct super_spawn *s, pid_t *pid, uint64_t *start_ticks, int *gate,
                char *err, size_t len)
{
    char cmd[2048], log[1024], port[16], cgroup[1100];
    if (expand(s->command, s->port, 0, cmd, sizeof cmd) < 0) {
        snprintf(err, len, "command too long");
        return -1;
    }
    family_prepare(cgroup, sizeof cgroup);
    super_log_path(s->logdir, s->name, log, sizeof log);
    int fd = open_log(s->logdir, log);
    int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || nul < 0) {
        snprintf(err, len, "cannot open its log %s: %s", log, strerror(errno));
        if (fd >= 0)
            close(fd);
        if (nul >= 0)
            close(nul);
        return -1;
    }
    snprintf(port, sizeof port, "%u", s->port);
    struct env env;
    if (env_build(&env, s, port) < 0) {
        env_free(&env);
        close(fd);
        close(nul);
        snprintf(err, len, "out of memory");
        return -1;
    }
    char *tag = NULL;
    for (size_t i = 0; i < env.n; i++)
        if (!strncmp(env.v[i], FAMILY_ENV "=", sizeof FAMILY_ENV))
            tag = env.v[i];
    int go[2];
    if (pipe2(go, O_CLOEXEC) < 0) {
        snprintf(err, len, "pipe: %s", strerror(errno));
        env_free(&env);
        close(fd);
        close(nul);
        return -1;
    }
    static struct refusal no; /* large; the loop is one thread */
    refusal_make(&no, s->run, s->shim);
    char *argv[] = {"sh", "-c", cmd, NULL};
    /* Until it execs, the child has the daemon's signal handlers, and
     * libevent's write to a socket the two share: a SIGTERM for a model
     * stopped as it starts would read, in the daemon, as one for the
     * daemon (seen: `vram unload` of a starting model stopped vram
     * serve). So no signal is taken between fork and the child's reset. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t p = fork();
    if (p == 0) { /* sigaction: async-signal-safe, as a child of threads needs */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        for (int sig = 1; sig < NSIG; sig++)
            if (sig != SIGKILL && sig != SIGSTOP)
                sigaction(sig, &dfl, NULL);
    } else {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    if (p < 0) {
        snprintf(err, len, "fork: %s", strerror(errno));
        env_free(&env);
        close(fd);
        close(nul);
        close(go[0]);
        close(go[1]);
        return -1;
    }
    if (p == 0) {
        setsid();
        family_join(cgroup, sizeof cgroup, tag);
        become(s->run, s->shim, &no, fd);
        close(go[1]);
        await_go(go[0]);
        dup2(nul, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        pass_fds(s->fds, s->nfds);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execve("/bin/sh", argv, env.v);
        _exit(127);
    }
    env_free(&env);
    close(fd);
    close(nul);
    close(go[0]);
    *gate = go[1];
    *pid = p;
    /* the child's start time: it exists from fork on */
    *start_ticks = hostproc_start_ticks((uint32_t)p);
    return 0;
}

pid_t super_stop_cmd(const char *command, const char *name, const char *logdir, unsigned port,
                     pid_t model, const struct runas *run, char *err, size_t len)
{
    char cmd[2048], log[1024], num[16];
    if (expand(command, port, model, cmd, sizeof cmd) < 0) {
        snprintf(err, len, "stop command too long");
        return -1;
    }
    super_log_path(logdir, name, log, sizeof log);
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
    struct env env = {0};
    struct super_spawn mine = {.name = name, .run = run};
    static struct refusal no;
    refusal_make(&no, run, NULL);
    snprintf(num, sizeof num, "%u", port);
    int bad = fd < 0 || nul < 0 || env_build(&env, &mine, num) < 0;
    snprintf(num, sizeof num, "%d", (int)model);
    bad = bad || env_put(&env, "PID", num) < 0;
    /* not of the model's family: a stop that signals the family spares it */
    for (size_t i = 0; !bad && i < env.n; i++)
        if (!strncmp(env.v[i], FAMILY_ENV "=", sizeof FAMILY_ENV)) {
            free(env.v[i]);
            env.v[i] = env.v[--env.n];
            env.v[env.n] = NULL;
            break;
        }
    char *argv[] = {"sh", "-c", cmd, NULL};
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t p = bad ? -1 : fork();
    if (p == 0) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        for (int sig = 1; sig < NSIG; sig++)
            if (sig != SIGKILL && sig != SIGSTOP)
                sigaction(sig, &dfl, NULL);
        setsid();
        become(run, NULL, &no, fd);
        dup2(nul, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        close_from(3);
        sigset_t empty;
        sigemptyset(&empty);
        sigprocmask(SIG_SETMASK, &empty, NULL);
        execve("/bin/sh", argv, env.v);
        _exit(127);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (p < 0)
        snprintf(err, len, "%s", bad ? "cannot open its log, or out of memory" : strerror(errno));
    env_free(&env);
    if (fd >= 0)
        close(fd);
    if (nul >= 0)
        close(nul);
    return p;
}

void super_go(int gate)
{
    if (gate < 0)
        return;
    ssize_t n;
    while ((n = write(gate, "g", 1)) < 0 && errno == EINTR)
        ;
    close(gate);
}

void super_signal(pid_t pid, uid_t uid, int sig)
{
    family_signal(pid, uid, sig);
}

bool super_alive(pid_t pid, uint64_t start_ticks)
{
    if (pid <= 1)
        return false;
    uint64_t now = hostproc_start_ticks((uint32_t)pid);
    return now && (!start_ticks || now == start_ticks);
}

void super_log_path(const char *logdir, const char *name, char *out, size_t len)
{
    /* "Qwen/Qwen2.5-7B" is one file, Qwen%2FQwen2.5-7B.log, not a folder */
    char file[MODELNAME_MAX * 3];
    if (modelname_file(name, file, sizeof file) < 0)
        snprintf(file, sizeof file, "model");
    snprintf(out, len, "%s/%s.log", logdir, file);
}

void super_last_log(const char *logdir, const char *name, char *out, size_t len)
{
    char path[1024];
    super_log_path(logdir, name, path, sizeof path);
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
