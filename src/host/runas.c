/* runas: see runas.h. The switch is made with raw system calls: glibc's
 * setuid and setgroups, in a process that has had threads, signal every
 * thread to change them all (setxid), which is neither async-signal-safe
 * nor needed in a child, where one thread is left. */
#include "host/runas.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int runas_lookup(const char *user, const char *group, struct runas *r, char *err, size_t len)
{
    memset(r, 0, sizeof *r);
    char buf[16384];
    struct passwd pw, *p = NULL;
    int e = getpwnam_r(user, &pw, buf, sizeof buf, &p);
    if (!p) {
        snprintf(err, len, "no user '%s' on this system%s%s", user, e ? ": " : "",
                 e ? strerror(e) : "");
        return -1;
    }
    r->uid = p->pw_uid;
    r->gid = p->pw_gid;
    snprintf(r->name, sizeof r->name, "%s", p->pw_name);
    snprintf(r->home, sizeof r->home, "%s", p->pw_dir ? p->pw_dir : "/");
    if (group && *group) {
        struct group gr, *g = NULL;
        e = getgrnam_r(group, &gr, buf, sizeof buf, &g);
        if (!g) {
            snprintf(err, len, "no group '%s' on this system%s%s", group, e ? ": " : "",
                     e ? strerror(e) : "");
            return -1;
        }
        r->gid = g->gr_gid;
    }
    struct group gr, *g = NULL;
    if (getgrgid_r(r->gid, &gr, buf, sizeof buf, &g) == 0 && g)
        snprintf(r->group, sizeof r->group, "%s", g->gr_name);
    else
        snprintf(r->group, sizeof r->group, "%u", (unsigned)r->gid);
    int n = RUNAS_GROUPS;
    if (getgrouplist(r->name, r->gid, r->groups, &n) < 0) {
        snprintf(err, len, "user %s is in more than %d groups", r->name, RUNAS_GROUPS);
        return -1;
    }
    r->ngroups = n;
    r->on = true;
    return 0;
}

bool runas_same(const struct runas *a, const struct runas *b)
{
    if (a->on != b->on)
        return false;
    if (!a->on)
        return true;
    return a->uid == b->uid && a->gid == b->gid && a->ngroups == b->ngroups &&
           !memcmp(a->groups, b->groups, (size_t)a->ngroups * sizeof a->groups[0]) &&
           !strcmp(a->home, b->home);
}

int runas_become(const struct runas *r)
{
    if (!r || !r->on)
        return 0;
    if (syscall(SYS_setgroups, (size_t)r->ngroups, r->groups) != 0 ||
        syscall(SYS_setresgid, r->gid, r->gid, r->gid) != 0 ||
        syscall(SYS_setresuid, r->uid, r->uid, r->uid) != 0)
        return -1;
    uid_t u[3];
    gid_t g[3];
    if (syscall(SYS_getresuid, &u[0], &u[1], &u[2]) != 0 ||
        syscall(SYS_getresgid, &g[0], &g[1], &g[2]) != 0)
        return -1;
    for (int k = 0; k < 3; k++)
        if (u[k] != r->uid || g[k] != r->gid)
            return -1;
    /* for good: a user who is not root cannot take root's ids back */
    if (r->uid != 0 && syscall(SYS_setresuid, 0, 0, 0) == 0)
        return -1;
    return 0;
}

struct answer {
    long bad; /* the index refused; n: none; -1: the switch failed */
    int eno;
};

int runas_may_open(const struct runas *r, const char *const *path, const int *want, size_t n,
                   size_t *bad, int *eno)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    /* the child runs no handler of the parent's (a daemon's signal
     * handlers write to descriptors the two share): every signal stays
     * blocked in it until it exits */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t c = fork();
    if (c == 0) {
        close(p[0]);
        struct answer a = {(long)n, 0};
        if (runas_become(r) < 0) {
            a.bad = -1;
            a.eno = errno;
        }
        for (size_t k = 0; a.bad == (long)n && k < n; k++)
            if (path[k] && access(path[k], want[k]) != 0)
                a = (struct answer){(long)k, errno};
        ssize_t w = write(p[1], &a, sizeof a);
        _exit(w == (ssize_t)sizeof a ? 0 : 1);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    close(p[1]);
    struct answer a = {-1, 0};
    ssize_t got = -1;
    if (c > 0) {
        while ((got = read(p[0], &a, sizeof a)) < 0 && errno == EINTR)
            ;
        while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    close(p[0]);
    if (got != (ssize_t)sizeof a || a.bad < 0)
        return -1;
    if (a.bad == (long)n)
        return 0;
    *bad = (size_t)a.bad;
    *eno = a.eno;
    return 1;
}
