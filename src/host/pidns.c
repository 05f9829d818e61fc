/* pidns: a process seen across PID namespaces, by its namespace, its pid
 * there and its start time (a start time is the same in every namespace:
 * ticks after the machine's boot). */
#include "host/pidns.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/proc.h"

uint32_t pidns_self(void)
{
    /* read again after a fork: the child of an unshare(CLONE_NEWPID) is in
     * another namespace than the parent whose memory it has */
    static pid_t known;
    static uint32_t ino;
    pid_t me = getpid();
    if (__atomic_load_n(&known, __ATOMIC_ACQUIRE) != me) {
        struct stat st;
        uint32_t i = stat("/proc/self/ns/pid", &st) == 0 ? (uint32_t)st.st_ino : 0;
        __atomic_store_n(&ino, i, __ATOMIC_RELAXED);
        __atomic_store_n(&known, me, __ATOMIC_RELEASE);
    }
    return __atomic_load_n(&ino, __ATOMIC_RELAXED);
}

/* The last number of status's "NSpid:" line: the pid in the process's own
 * namespace; 0 when there is none. */
static uint32_t own_pid(uint32_t pid)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%u/status", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *l = strstr(buf, "\nNSpid:");
    if (!l)
        return 0;
    uint32_t last = 0;
    for (const char *p = l + 7; *p && *p != '\n';) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p)
            break;
        last = (uint32_t)v;
        p = end;
    }
    return last;
}

uint32_t pidns_find(uint32_t ns, uint32_t nspid, uint64_t start)
{
    if (!nspid || !start)
        return 0;
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    uint32_t found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        char *end;
        unsigned long pid = strtoul(e->d_name, &end, 10);
        if (*end || !pid || pid > UINT32_MAX || hostproc_start_ticks((uint32_t)pid) != start ||
            own_pid((uint32_t)pid) != nspid)
            continue;
        /* its namespace, where this reader may look (its user's, or root) */
        char path[64];
        struct stat st;
        snprintf(path, sizeof path, "/proc/%lu/ns/pid", pid);
        if (stat(path, &st) == 0 && (uint32_t)st.st_ino != ns)
            continue;
        found = (uint32_t)pid;
    }
    closedir(d);
    return found;
}
