/* meminfo: /proc/meminfo, and the memory limit of this process's cgroup
 * and of those above it (cgroup v2's memory.max less memory.current; v1's
 * memory.limit_in_bytes less memory.usage_in_bytes), found through
 * /proc/self/mountinfo so that a container's own view of the hierarchy
 * works too. The smallest room wins. */
#include "host/meminfo.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A byte count from a cgroup file; UINT64_MAX for "max", v1's "no limit"
 * (a page short of 2^63) or nothing. */
static uint64_t number(const char *dir, const char *name)
{
    char path[4200], buf[64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!slurp(path, buf, sizeof buf) || !strncmp(buf, "max", 3))
        return UINT64_MAX;
    char *end;
    unsigned long long v = strtoull(buf, &end, 10);
    return end == buf || v >= (1ULL << 62) ? UINT64_MAX : (uint64_t)v;
}

/* This process's cgroup path in the v2 hierarchy (v2) or the v1 memory
 * one, from /proc/self/cgroup. */
static bool own_path(bool v2, char *out, size_t len)
{
    char line[4200];
    FILE *f = fopen("/proc/self/cgroup", "re");
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
        if (!b)
            continue;
        *b = '\0';
        bool match = v2 ? !strcmp(line, "0") && a[1] == '\0' : strstr(a + 1, "memory") != NULL;
        if (match && strlen(b + 1) < len) {
            snprintf(out, len, "%s", b + 1);
            found = true;
        }
    }
    if (f)
        fclose(f);
    return found;
}

/* Where the hierarchy is mounted, and which cgroup the mount shows (a
 * container sees its own as the root). */
static bool mount_of(bool v2, char *point, char *root, size_t len)
{
    char line[4200];
    FILE *f = fopen("/proc/self/mountinfo", "re");
    bool found = false;
    /* ID PARENT MAJ:MIN ROOT POINT OPTS... - TYPE SOURCE SUPEROPTS */
    while (f && !found && fgets(line, sizeof line, f)) {
        char *dash = strstr(line, " - ");
        char r[4096], p[4096], type[32], super[512] = "";
        if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s", r, p) != 2 ||
            sscanf(dash + 3, "%31s %*s %511s", type, super) < 1)
            continue;
        found = v2 ? !strcmp(type, "cgroup2")
                   : !strcmp(type, "cgroup") && strstr(super, "memory") != NULL;
        if (found && strlen(r) < len && strlen(p) < len) {
            snprintf(root, len, "%s", r);
            snprintf(point, len, "%s", p);
        } else {
            found = false;
        }
    }
    if (f)
        fclose(f);
    return found;
}

/* The room left under the limits of the cgroup and its parents, up to the
 * top of what the mount shows. */
static uint64_t cgroup_room(bool v2)
{
    char path[4096], point[4096], root[4096], dir[8400];
    if (!own_path(v2, path, sizeof path) || !mount_of(v2, point, root, sizeof root))
        return UINT64_MAX;
    size_t rl = strcmp(root, "/") ? strlen(root) : 0;
    if (strncmp(path, root, rl) != 0)
        return UINT64_MAX;
    char *rel = path + rl; /* below what the mount shows */
    uint64_t room = UINT64_MAX;
    for (;;) {
        snprintf(dir, sizeof dir, "%s%s", point, rel);
        uint64_t max = number(dir, v2 ? "memory.max" : "memory.limit_in_bytes");
        uint64_t cur = number(dir, v2 ? "memory.current" : "memory.usage_in_bytes");
        if (max != UINT64_MAX && cur != UINT64_MAX) {
            uint64_t left = max > cur ? max - cur : 0;
            room = left < room ? left : room;
        }
        char *slash = strrchr(rel, '/');
        if (!slash)
            break;
        *slash = '\0';
    }
    return room;
}

uint64_t meminfo_available(void)
{
    char buf[4096];
    uint64_t avail = slurp("/proc/meminfo", buf, sizeof buf) ? meminfo_parse(buf) : UINT64_MAX;
    for (int v2 = 0; v2 < 2; v2++) {
        uint64_t r = cgroup_room(v2 == 1);
        avail = r < avail ? r : avail;
    }
    return avail;
}
