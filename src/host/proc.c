/* proc: what the OS knows of a process, read from a /proc tree.
 *
 * Each file is read once with a single read() into a stack buffer: a process
 * can exit between two reads, and then we report it as gone rather than show
 * half of it. */
#include "host/proc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/textsafe.h"
#include "host/cgroup.h"

static ssize_t slurp(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got + 1 < len) {
        ssize_t r = read(fd, buf + got, len - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    return (ssize_t)got;
}

void hostproc_init(struct hostproc_ctx *c, const char *root)
{
    memset(c, 0, sizeof *c);
    snprintf(c->root, sizeof c->root, "%s", root ? root : "/proc");
    c->hz = sysconf(_SC_CLK_TCK);
    if (c->hz <= 0)
        c->hz = 100;
    c->page = sysconf(_SC_PAGESIZE);
    if (c->page <= 0)
        c->page = 4096;
    char path[300], buf[8192];
    snprintf(path, sizeof path, "%s/stat", c->root);
    if (slurp(path, buf, sizeof buf) > 0) {
        const char *b = strstr(buf, "\nbtime ");
        if (b)
            c->btime = strtoull(b + 7, NULL, 10);
    }
}

int hostproc_parse_stat_all(const char *buf, size_t len, char *comm, size_t commlen,
                            struct hostproc_stat *st)
{
    const char *open = memchr(buf, '(', len);
    const char *close = NULL;
    for (size_t i = len; i > 0; i--)
        if (buf[i - 1] == ')') {
            close = buf + i - 1;
            break;
        }
    if (!open || !close || close < open || commlen == 0)
        return -1;
    memset(st, 0, sizeof *st);
    size_t n = (size_t)(close - open - 1);
    snprintf(comm, commlen, "%.*s", (int)(n < commlen ? n : commlen - 1), open + 1);
    /* after ") ": state ppid pgrp session tty_nr tpgid flags minflt cminflt
     * majflt cmajflt utime stime cutime cstime priority nice num_threads
     * itrealvalue starttime vsize rss: starttime is the 20th field after
     * the name, rss the 22nd */
    const char *p = close + 1;
    const char *end = buf + len;
    char field[32];
    for (int f = 1; f <= 22; f++) {
        while (p < end && *p == ' ')
            p++;
        size_t w = 0;
        while (p < end && *p != ' ' && *p != '\n' && *p != '\0') {
            if (w + 1 < sizeof field)
                field[w++] = *p;
            p++;
        }
        field[w] = '\0';
        if (w == 0)
            return f > 20 ? 0 : -1; /* rss is a bonus; the rest is needed */
        if (f == 1)
            st->state = field[0];
        else if (f == 2)
            st->ppid = (uint32_t)strtoul(field, NULL, 10);
        else if (f == 12)
            st->utime = strtoull(field, NULL, 10);
        else if (f == 13)
            st->stime = strtoull(field, NULL, 10);
        else if (f == 20)
            st->start_ticks = strtoull(field, NULL, 10);
        else if (f == 22) {
            /* a kernel thread's is 0; a negative one is no count of pages */
            st->rss_pages = field[0] == '-' ? 0 : strtoull(field, NULL, 10);
            st->rss_known = field[0] != '-';
        }
    }
    return 0;
}

int hostproc_parse_stat(const char *buf, size_t len, char *comm, size_t commlen, char *state,
                        uint32_t *ppid, uint64_t *start_ticks)
{
    struct hostproc_stat st;
    if (hostproc_parse_stat_all(buf, len, comm, commlen, &st) < 0)
        return -1;
    *state = st.state;
    *ppid = st.ppid;
    *start_ticks = st.start_ticks;
    return 0;
}

static enum snap_pstate fold_state(char s)
{
    switch (s) {
    case 'R':
        return SNAP_PS_RUNNING;
    case 'S':
    case 'D':
    case 'I':
        return SNAP_PS_SLEEPING;
    case 'T':
    case 't':
        return SNAP_PS_STOPPED;
    case 'Z':
    case 'X':
        return SNAP_PS_ZOMBIE;
    default:
        return SNAP_PS_UNKNOWN;
    }
}

static void user_name(struct hostproc_ctx *c, uint32_t uid, char *out, size_t len)
{
    for (size_t i = 0; i < c->nusers; i++)
        if (c->users[i].uid == uid) {
            snprintf(out, len, "%s", c->users[i].name);
            return;
        }
    struct passwd pw, *res = NULL;
    char buf[1024];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res)
        textsafe_copy(res->pw_name, len, out, len); /* NSS's word, printed as it is */
    else
        snprintf(out, len, "%u", uid);
    if (c->nusers < sizeof c->users / sizeof c->users[0]) {
        c->users[c->nusers].uid = uid;
        snprintf(c->users[c->nusers].name, sizeof c->users[0].name, "%s", out);
        c->nusers++;
    }
}

static void clear_host(struct snap_proc *p)
{
    p->host_known = false;
    p->name[0] = p->user[0] = p->cmdline[0] = p->container[0] = '\0';
    p->uid = 0;
    p->state = SNAP_PS_UNKNOWN;
    p->ppid = 0;
    p->start_time = 0;
    p->rss_known = p->cpu_known = false;
    p->rss = p->cpu_ms = 0;
    p->cpu_pct = 0;
}

int hostproc_fill(struct hostproc_ctx *c, struct snap_proc *p)
{
    char path[320], buf[4096];
    clear_host(p);
    snprintf(path, sizeof path, "%s/%u/stat", c->root, p->pid);
    ssize_t n = slurp(path, buf, sizeof buf);
    char comm[SNAP_NAME_MAX];
    struct hostproc_stat st;
    if (n <= 0 || hostproc_parse_stat_all(buf, (size_t)n, comm, sizeof comm, &st))
        return -1;
    p->state = fold_state(st.state);
    p->ppid = st.ppid;
    p->start_time = c->btime + st.start_ticks / (uint64_t)c->hz;
    p->cpu_ms = (st.utime + st.stime) * 1000 / (uint64_t)c->hz;
    p->rss = st.rss_pages * (uint64_t)c->page;
    p->rss_known = st.rss_known;
    snprintf(p->name, sizeof p->name, "%s", comm);

    snprintf(path, sizeof path, "%s/%u/status", c->root, p->pid);
    if (slurp(path, buf, sizeof buf) > 0) {
        const char *u = strstr(buf, "\nUid:");
        if (u) {
            p->uid = (uint32_t)strtoul(u + 5, NULL, 10);
            user_name(c, p->uid, p->user, sizeof p->user);
        }
    }

    snprintf(path, sizeof path, "%s/%u/cmdline", c->root, p->pid);
    n = slurp(path, buf, sizeof buf);
    if (n > 0) {
        /* argv[0]'s base name is the full name where comm is cut at 15 chars */
        const char *base = strrchr(buf, '/');
        base = base ? base + 1 : buf;
        size_t cl = strlen(comm);
        if (cl == 15 && strncmp(base, comm, cl) == 0)
            snprintf(p->name, sizeof p->name, "%.*s", (int)strcspn(base, " :"), base);
        /* arguments are NUL-separated; a newline inside one must not break a
         * table row, and no control sequence may reach a terminal */
        for (ssize_t i = 0; i < n - 1; i++)
            if (buf[i] == '\0' || buf[i] == '\n' || buf[i] == '\t')
                buf[i] = ' ';
        textsafe_copy(buf, (size_t)n, p->cmdline, sizeof p->cmdline);
    }
    /* the name is the process's own to choose (prctl, argv[0]): another
     * user's may be "\e[2J" */
    textsafe(p->name);

    snprintf(path, sizeof path, "%s/%u/cgroup", c->root, p->pid);
    n = slurp(path, buf, sizeof buf);
    if (n > 0) {
        char cg[256];
        cgroup_parse(buf, (size_t)n, cg, sizeof cg, p->container, sizeof p->container);
        textsafe(p->container);
    }
    p->host_known = true;
    return 0;
}

int hostproc_detail(const struct hostproc_ctx *c, uint32_t pid, char *cmdline, size_t cmdlen,
                    char *cgroup, size_t cglen)
{
    char path[320], buf[8192];
    cmdline[0] = cgroup[0] = '\0';
    snprintf(path, sizeof path, "%s/%u/stat", c->root, pid);
    if (slurp(path, buf, 64) <= 0)
        return -1;
    snprintf(path, sizeof path, "%s/%u/cmdline", c->root, pid);
    ssize_t n = slurp(path, buf, sizeof buf);
    for (ssize_t i = 0; i < n - 1; i++)
        if (buf[i] == '\0' || buf[i] == '\n' || buf[i] == '\t')
            buf[i] = ' ';
    if (n > 0)
        textsafe_copy(buf, (size_t)n, cmdline, cmdlen);
    snprintf(path, sizeof path, "%s/%u/cgroup", c->root, pid);
    n = slurp(path, buf, sizeof buf);
    char id[SNAP_CONTAINER_MAX];
    if (n > 0 && cgroup_parse(buf, (size_t)n, cgroup, cglen, id, sizeof id) == 0)
        textsafe(cgroup);
    else
        cgroup[0] = '\0';
    return 0;
}

uint64_t hostproc_start_ticks(uint32_t pid)
{
    char path[64], buf[1024], comm[SNAP_NAME_MAX], st;
    uint32_t ppid;
    uint64_t ticks = 0;
    snprintf(path, sizeof path, "/proc/%u/stat", pid);
    ssize_t n = slurp(path, buf, sizeof buf);
    if (n <= 0 || hostproc_parse_stat(buf, (size_t)n, comm, sizeof comm, &st, &ppid, &ticks))
        return 0;
    if ((st == 'Z' || st == 'X') && hostproc_threads(pid) <= 1)
        return 0;
    return ticks + 1; /* never 0 for a live process */
}

int hostproc_uid(uint32_t pid, uint32_t *uid)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%u", pid);
    if (pid == 0 || stat(path, &st) < 0)
        return -1;
    *uid = (uint32_t)st.st_uid;
    return 0;
}

bool hostproc_environ_has(uint32_t pid, const char *entry)
{
    char path[64], buf[16384];
    size_t wn = strlen(entry);
    snprintf(path, sizeof path, "/proc/%u/environ", pid);
    int fd = pid ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0)
        return false;
    bool hit = false, skip = false; /* skip: the rest of an entry longer than buf */
    size_t have = 0;
    while (!hit) {
        ssize_t r = read(fd, buf + have, sizeof buf - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        have += (size_t)r;
        /* entries end with a NUL: only whole ones are compared */
        size_t start = 0;
        for (size_t i = 0; i < have && !hit; i++) {
            if (buf[i] != '\0')
                continue;
            hit = !skip && i - start == wn && !memcmp(buf + start, entry, wn);
            skip = false;
            start = i + 1;
        }
        if (start == 0 && have == sizeof buf) {
            have = 0; /* an entry longer than buf: not the one */
            skip = true;
        } else {
            memmove(buf, buf + start, have - start);
            have -= start;
        }
    }
    close(fd);
    return hit;
}

int hostproc_threads(uint32_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/task", pid);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static int holder_push(struct hostproc_holder **v, size_t *n, size_t *cap, uint32_t pid,
                       uint64_t minors)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 32;
        struct hostproc_holder *nv = realloc(*v, nc * sizeof *nv);
        if (!nv)
            return -1;
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = (struct hostproc_holder){pid, minors};
    return 0;
}

int hostproc_nvidia_holders(const struct hostproc_ctx *c, struct hostproc_holder **out)
{
    *out = NULL;
    DIR *d = opendir(c->root);
    if (!d)
        return -1;
    struct hostproc_holder *v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        char path[320];
        snprintf(path, sizeof path, "%s/%s/fd", c->root, e->d_name);
        DIR *fd = opendir(path);
        if (!fd)
            continue; /* not ours to look into, or gone */
        uint64_t minors = 0;
        struct dirent *f;
        while ((f = readdir(fd))) {
            if (f->d_name[0] == '.')
                continue;
            char link[400], target[64];
            snprintf(link, sizeof link, "%s/%s", path, f->d_name);
            ssize_t l = readlink(link, target, sizeof target - 1);
            if (l < 12)
                continue;
            target[l] = '\0';
            if (strncmp(target, "/dev/nvidia", 11) != 0 || !isdigit((unsigned char)target[11]))
                continue;
            unsigned long m = strtoul(target + 11, NULL, 10);
            if (m < 64)
                minors |= 1ULL << m;
        }
        closedir(fd);
        if (minors && holder_push(&v, &n, &cap, (uint32_t)strtoul(e->d_name, NULL, 10), minors)) {
            free(v);
            closedir(d);
            return -1;
        }
    }
    closedir(d);
    *out = v;
    return (int)n;
}
