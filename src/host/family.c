/* family: a model's processes, found by cgroup and by environment tag.
 *
 * The tag is what finds a child that left the process group and outlived
 * its parent, where no cgroup could be made (a container, cgroup v1). It
 * is not a security boundary: anyone may put the tag in their own
 * processes, and the daemon signals only processes of the model's user,
 * so a process that claims to be a model's child can only get itself
 * stopped. */
#include "host/family.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/proc.h"

/* Where cgroup v2 is mounted and the daemon's own cgroup in it. */
static int cgroup_self(char *out, size_t len)
{
    char line[1024], mnt[512] = "", self[512] = "";
    FILE *f = fopen("/proc/self/mountinfo", "re");
    while (f && fgets(line, sizeof line, f)) {
        /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS... - FSTYPE SOURCE SUPER */
        char *dash = strstr(line, " - cgroup2 ");
        char root[512], point[512];
        if (dash && sscanf(line, "%*s %*s %*s %511s %511s", root, point) == 2 &&
            !strcmp(root, "/")) {
            snprintf(mnt, sizeof mnt, "%s", point);
            break;
        }
    }
    if (f)
        fclose(f);
    f = fopen("/proc/self/cgroup", "re");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "0::", 3)) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(self, sizeof self, "%s", line + 3);
            break;
        }
    if (f)
        fclose(f);
    if (!mnt[0] || !self[0])
        return -1;
    int n = snprintf(out, len, "%s%s", mnt, strcmp(self, "/") ? self : "");
    return n > 0 && (size_t)n < len ? 0 : -1;
}

static int cgroup_of(pid_t pid, char *out, size_t len)
{
    char self[1024];
    if (cgroup_self(self, sizeof self) < 0 || access(self, W_OK) != 0)
        return -1;
    int n = snprintf(out, len, "%s/vram-%d", self, (int)pid);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

void family_prepare(char *base, size_t len)
{
    if (cgroup_self(base, len) < 0 || access(base, W_OK) != 0 || strlen(base) + 40 > len)
        base[0] = '\0';
}

/* pid's digits at out (no NUL); how many. */
static int digits(pid_t pid, char *out)
{
    char d[12];
    int n = 0;
    do {
        d[n++] = (char)('0' + pid % 10);
        pid /= 10;
    } while (pid && n < 11);
    for (int k = 0; k < n; k++)
        out[k] = d[n - 1 - k];
    return n;
}

void family_join(char *base, size_t len, char *tag)
{
    pid_t self = getpid();
    char *d = strchr(tag, '=');
    if (d)
        d[1 + digits(self, d + 1)] = '\0';
    size_t at = strlen(base);
    if (!at || at + 40 > len)
        return;
    memcpy(base + at, "/vram-", 6);
    at += 6;
    at += (size_t)digits(self, base + at);
    base[at] = '\0';
    if (mkdir(base, 0755) < 0 && errno != EEXIST)
        return; /* stays where the daemon is: the tag still finds it */
    memcpy(base + at, "/cgroup.procs", 14);
    int fd = open(base, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (write(fd, "0", 1) < 0) { /* "0" moves the writer itself */
        }
        close(fd);
    }
}

static unsigned by_tag(pid_t main, uid_t uid, int sig)
{
    char want[64];
    snprintf(want, sizeof want, FAMILY_ENV "=%d", (int)main);
    DIR *dir = opendir("/proc");
    if (!dir)
        return 0;
    unsigned n = 0;
    pid_t self = getpid();
    struct dirent *e;
    while ((e = readdir(dir))) {
        char *end;
        long p = strtol(e->d_name, &end, 10);
        if (*end || p <= 1 || p == self)
            continue;
        struct stat st;
        char path[64];
        snprintf(path, sizeof path, "/proc/%ld", p);
        if (stat(path, &st) < 0 || st.st_uid != uid)
            continue;
        if (hostproc_environ_has((uint32_t)p, want) && kill((pid_t)p, sig) == 0)
            n++;
    }
    closedir(dir);
    return n;
}

static unsigned by_cgroup(pid_t main, int sig)
{
    char dir[1024], path[1100];
    if (cgroup_of(main, dir, sizeof dir) < 0)
        return 0;
    unsigned n = 0;
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    FILE *f = fopen(path, "re");
    long p;
    while (f && fscanf(f, "%ld", &p) == 1)
        if (p > 1 && kill((pid_t)p, sig) == 0)
            n++;
    if (f)
        fclose(f);
    if (sig == SIGKILL) { /* also whatever forks meanwhile (Linux 5.14) */
        snprintf(path, sizeof path, "%s/cgroup.kill", dir);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
            if (write(fd, "1", 1) < 0) {
                /* an older kernel: the list above did it */
            }
            close(fd);
        }
    }
    return n;
}

unsigned family_signal(pid_t pid, uid_t uid, int sig)
{
    if (pid <= 1)
        return 0;
    unsigned n = by_cgroup(pid, sig) + by_tag(pid, uid, sig);
    if (kill(-pid, sig) == 0)
        n++;
    else if (kill(pid, sig) == 0) /* not a group leader (an adopted process) */
        n++;
    return n;
}

/* pid's cgroup v2 path in the hierarchy ("/system.slice/vram.service"). */
static int cgroup_path(pid_t pid, char *out, size_t len)
{
    char path[64], line[1200];
    snprintf(path, sizeof path, "/proc/%d/cgroup", (int)pid);
    FILE *f = fopen(path, "re");
    int rc = -1;
    while (f && rc < 0 && fgets(line, sizeof line, f))
        if (!strncmp(line, "0::", 3)) {
            line[strcspn(line, "\n")] = '\0';
            int n = snprintf(out, len, "%s", line + 3);
            rc = n > 0 && (size_t)n < len ? 0 : -1;
        }
    if (f)
        fclose(f);
    return rc;
}

/* The main pid of the model whose cgroup pid is in (MINE/vram-MAIN, MINE
 * the daemon's own cgroup: a cgroup of that name elsewhere, which anyone
 * with a delegated tree may make, is no model's), or 0. Unlike the
 * environment, readable for a model that made itself undumpable. */
static pid_t main_by_cgroup(pid_t pid)
{
    char mine[1024], its[1100];
    if (cgroup_path(getpid(), mine, sizeof mine) < 0 || cgroup_path(pid, its, sizeof its) < 0)
        return 0;
    size_t ml = strcmp(mine, "/") ? strlen(mine) : 0;
    if (strncmp(its, mine, ml) || strncmp(its + ml, "/vram-", 6))
        return 0;
    char *end;
    long p = strtol(its + ml + 6, &end, 10);
    return *end == '\0' && p > 1 ? (pid_t)p : 0;
}

pid_t family_main_of(pid_t pid)
{
    pid_t main = main_by_cgroup(pid);
    if (main)
        return main;
    char path[64], buf[16384];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    static const char key[] = FAMILY_ENV "=";
    for (char *e = buf; e < buf + n; e += strlen(e) + 1)
        if (!strncmp(e, key, sizeof key - 1))
            return (pid_t)strtol(e + sizeof key - 1, NULL, 10);
    return 0;
}

void family_sweep(const pid_t *live, size_t n)
{
    char self[1024], path[1200];
    if (cgroup_self(self, sizeof self) < 0)
        return;
    DIR *dir = opendir(self);
    struct dirent *e;
    while (dir && (e = readdir(dir))) {
        char *end;
        if (strncmp(e->d_name, "vram-", 5))
            continue;
        long p = strtol(e->d_name + 5, &end, 10);
        bool in_use = *end != '\0';
        for (size_t k = 0; !in_use && k < n; k++)
            in_use = live[k] == (pid_t)p;
        snprintf(path, sizeof path, "%s/%s", self, e->d_name);
        if (!in_use)
            rmdir(path); /* fails, as it should, while a process is in it */
    }
    if (dir)
        closedir(dir);
}

void family_forget(pid_t pid)
{
    char dir[1024];
    if (pid > 1 && cgroup_of(pid, dir, sizeof dir) == 0)
        rmdir(dir);
}
