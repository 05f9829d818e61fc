/* sysgpu: display hardware and GPU daemons, from /sys and /proc. */
#include "host/sysgpu.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/beneath.h"

/* The first line of a regular file beneath root (a link never leads out
 * of it, and a FIFO or a device is never opened: --sys-root and
 * --proc-root may name another user's tree). */
static bool read_line(int root, const char *rel, char *buf, size_t len)
{
    if (beneath_read_text(root, rel, buf, len) < 0)
        return false;
    buf[strcspn(buf, "\n")] = '\0';
    return true;
}

static DIR *open_dir(int root, const char *rel)
{
    mode_t kind;
    int fd = beneath_open(root, rel, BENEATH_DIR | BENEATH_LINKS | BENEATH_IN_ROOT, &kind);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d && fd >= 0)
        close(fd);
    return d;
}

bool sysgpu_other_gpu(const char *sysroot, char *name, size_t len)
{
    int root = open(sysroot, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = root >= 0 ? open_dir(root, "class/drm") : NULL;
    if (!d) {
        if (root >= 0)
            close(root);
        return false;
    }
    struct dirent *e;
    bool found = false;
    while (!found && (e = readdir(d))) {
        /* card0, card1: not the connectors (card0-HDMI-A-1) */
        if (strncmp(e->d_name, "card", 4) || !isdigit((unsigned char)e->d_name[4]) ||
            strchr(e->d_name, '-'))
            continue;
        char path[800], vendor[32];
        snprintf(path, sizeof path, "class/drm/%s/device/vendor", e->d_name);
        if (!read_line(root, path, vendor, sizeof vendor) || !strcmp(vendor, "0x10de"))
            continue;
        const char *who = !strcmp(vendor, "0x8086")   ? "the Intel GPU"
                          : !strcmp(vendor, "0x1002") ? "the AMD GPU"
                                                      : "the other GPU";
        snprintf(name, len, "%s (%s)", who, e->d_name);
        found = true;
    }
    closedir(d);
    close(root);
    return found;
}

uint32_t sysgpu_find_process(const char *procroot, const char *name)
{
    int root = open(procroot, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = root >= 0 ? open_dir(root, ".") : NULL;
    if (!d) {
        if (root >= 0)
            close(root);
        return 0;
    }
    struct dirent *e;
    uint32_t pid = 0;
    while (!pid && (e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        char path[512], comm[64];
        snprintf(path, sizeof path, "%s/comm", e->d_name);
        if (read_line(root, path, comm, sizeof comm) && !strcmp(comm, name))
            pid = (uint32_t)strtoul(e->d_name, NULL, 10);
    }
    closedir(d);
    close(root);
    return pid;
}
