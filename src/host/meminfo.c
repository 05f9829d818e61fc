/* meminfo: /proc/meminfo and the cgroup v2 limit of this process's own
 * cgroup (memory.max less memory.current), the smaller of the two. */
#include "host/meminfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/cgroup.h"

uint64_t meminfo_parse(const char *text)
{
    const char *at = strstr(text, "MemAvailable:");
    unsigned long long kb;
    if (!at || sscanf(at, "MemAvailable: %llu kB", &kb) != 1 || kb > UINT64_MAX >> 10)
        return UINT64_MAX;
    return (uint64_t)kb << 10;
}

static size_t slurp(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n;
}

/* A number from a cgroup file; UINT64_MAX for "max" or nothing. */
static uint64_t cg_number(const char *dir, const char *name)
{
    char path[4200], buf[64];
    snprintf(path, sizeof path, "/sys/fs/cgroup%s/%s", dir, name);
    if (!slurp(path, buf, sizeof buf) || !strncmp(buf, "max", 3))
        return UINT64_MAX;
    char *end;
    unsigned long long v = strtoull(buf, &end, 10);
    return end == buf ? UINT64_MAX : (uint64_t)v;
}

uint64_t meminfo_available(void)
{
    char buf[4096], path[4096], id[64];
    uint64_t avail = slurp("/proc/meminfo", buf, sizeof buf) ? meminfo_parse(buf) : UINT64_MAX;
    size_t n = slurp("/proc/self/cgroup", buf, sizeof buf);
    if (!n || cgroup_parse(buf, n, path, sizeof path, id, sizeof id) < 0 || !path[0])
        return avail;
    /* the limit of this cgroup or of any above it, whichever leaves least */
    for (;;) {
        uint64_t max = cg_number(path, "memory.max"), cur = cg_number(path, "memory.current");
        if (max != UINT64_MAX && cur != UINT64_MAX) {
            uint64_t left = max > cur ? max - cur : 0;
            avail = left < avail ? left : avail;
        }
        char *slash = strrchr(path, '/');
        if (!slash || slash == path)
            break;
        *slash = '\0';
    }
    return avail;
}
