/* sysgpu: display hardware and GPU daemons, from /sys and /proc. */
#include "host/sysgpu.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return ok;
}

bool sysgpu_other_gpu(const char *sysroot, char *name, size_t len)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/class/drm", sysroot);
    DIR *d = opendir(dir);
    if (!d)
        return false;
    struct dirent *e;
    bool found = false;
    while (!found && (e = readdir(d))) {
        /* card0, card1: not the connectors (card0-HDMI-A-1) */
        if (strncmp(e->d_name, "card", 4) || !isdigit((unsigned char)e->d_name[4]) ||
            strchr(e->d_name, '-'))
            continue;
        char path[800], vendor[32];
        snprintf(path, sizeof path, "%s/%s/device/vendor", dir, e->d_name);
        if (!read_line(path, vendor, sizeof vendor) || !strcmp(vendor, "0x10de"))
            continue;
        const char *who = !strcmp(vendor, "0x8086")   ? "the Intel GPU"
                          : !strcmp(vendor, "0x1002") ? "the AMD GPU"
                                                      : "the other GPU";
        snprintf(name, len, "%s (%s)", who, e->d_name);
        found = true;
    }
    closedir(d);
    return found;
}

uint32_t sysgpu_find_process(const char *procroot, const char *name)
{
    DIR *d = opendir(procroot);
    if (!d)
        return 0;
    struct dirent *e;
    uint32_t pid = 0;
    while (!pid && (e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        char path[512], comm[64];
        snprintf(path, sizeof path, "%s/%s/comm", procroot, e->d_name);
        if (read_line(path, comm, sizeof comm) && !strcmp(comm, name))
            pid = (uint32_t)strtoul(e->d_name, NULL, 10);
    }
    closedir(d);
    return pid;
}
