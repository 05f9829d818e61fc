/* display: DRM cards, display servers and xorg.conf under a root.
 *
 * Only plain files are needed (vendor, boot_vga, uevent, the connectors'
 * status), so that a fixture tree of text files stands in for /sys; the
 * device a server holds comes from its fd links, which may dangle in a
 * fixture just as they point at /dev in a live system. */
#include "host/display.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/beneath.h"

/* Up to len - 1 bytes of a regular file beneath the root (sysfs's
 * attributes are). The tree may be another user's (--root): no link
 * leads out of it, and nothing but a regular file is opened, so a FIFO,
 * a terminal or a watchdog a link points at is never touched. */
static bool read_text(int root, const char *rel, char *buf, size_t len)
{
    return beneath_read_text(root, rel, buf, len) >= 0;
}

/* A folder beneath the root, to list. */
static DIR *open_dir(int root, const char *rel)
{
    mode_t kind;
    int fd = beneath_open(root, rel, BENEATH_DIR | BENEATH_LINKS | BENEATH_IN_ROOT, &kind);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d && fd >= 0)
        close(fd);
    return d;
}

static bool is_card(const char *name)
{
    if (strncmp(name, "card", 4) || !isdigit((unsigned char)name[4]))
        return false;
    for (const char *c = name + 4; *c; c++)
        if (!isdigit((unsigned char)*c))
            return false;
    return true;
}

/* KEY=value from a uevent file. */
static void uevent_get(const char *text, const char *key, char *out, size_t len)
{
    size_t kl = strlen(key);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (!strncmp(l, key, kl) && l[kl] == '=') {
            snprintf(out, len, "%.*s", (int)strcspn(l + kl + 1, "\n"), l + kl + 1);
            return;
        }
}

static void add_monitors(int root, const char *dir, struct hl_card *c)
{
    DIR *d = open_dir(root, dir);
    if (!d)
        return;
    struct dirent *e;
    size_t at = 0;
    size_t nl = strlen(c->name);
    while ((e = readdir(d))) {
        /* card0-HDMI-A-1: a connector of card0 */
        if (strncmp(e->d_name, c->name, nl) || e->d_name[nl] != '-')
            continue;
        char path[768], status[32];
        snprintf(path, sizeof path, "%s/%s/status", dir, e->d_name);
        if (!read_text(root, path, status, sizeof status) || strncmp(status, "connected", 9))
            continue;
        if (at < sizeof c->monitors)
            at += (size_t)snprintf(c->monitors + at, sizeof c->monitors - at, "%s%s",
                                   at ? ", " : "", e->d_name + nl + 1);
        c->nmonitors++;
    }
    closedir(d);
}

static void scan_cards(int root, struct hl_system *sys, DIR *d)
{
    const char *dir = "sys/class/drm";
    struct dirent *e;
    while ((e = readdir(d)) && sys->ncards < HL_MAX_CARDS) {
        if (!is_card(e->d_name))
            continue;
        struct hl_card *c = &sys->cards[sys->ncards];
        memset(c, 0, sizeof *c);
        snprintf(c->name, sizeof c->name, "%s", e->d_name);
        char path[768], buf[1024];
        snprintf(path, sizeof path, "%s/%s/device/vendor", dir, e->d_name);
        if (!read_text(root, path, buf, sizeof buf))
            continue; /* a virtual card (vkms, simpledrm before a driver): no PCI device */
        c->vendor = (unsigned)strtoul(buf, NULL, 16);
        snprintf(path, sizeof path, "%s/%s/device/boot_vga", dir, e->d_name);
        c->boot_vga = read_text(root, path, buf, sizeof buf) && buf[0] == '1';
        snprintf(path, sizeof path, "%s/%s/device/uevent", dir, e->d_name);
        if (read_text(root, path, buf, sizeof buf)) {
            uevent_get(buf, "DRIVER", c->driver, sizeof c->driver);
            uevent_get(buf, "PCI_SLOT_NAME", c->pci, sizeof c->pci);
        }
        add_monitors(root, dir, c);
        sys->ncards++;
    }
    /* readdir order is the filesystem's: sort by name for stable output */
    for (size_t i = 1; i < sys->ncards; i++)
        for (size_t j = i; j > 0 && strverscmp(sys->cards[j - 1].name, sys->cards[j].name) > 0;
             j--) {
            struct hl_card t = sys->cards[j];
            sys->cards[j] = sys->cards[j - 1];
            sys->cards[j - 1] = t;
        }
}

/* The card a process holds: a /dev/dri/cardN link, or /dev/nvidiaN (the
 * nvidia Xorg driver opens those) meaning the first NVIDIA card. */
static int held_card(int root, const char *procdir, const struct hl_system *sys)
{
    char fddir[700];
    snprintf(fddir, sizeof fddir, "%s/fd", procdir);
    DIR *d = open_dir(root, fddir);
    if (!d)
        return -1;
    struct dirent *e;
    int card = -1;
    while (card < 0 && (e = readdir(d))) {
        char target[256];
        /* the link itself is read, never followed */
        ssize_t n = readlinkat(dirfd(d), e->d_name, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if (!strncmp(target, "/dev/dri/card", 13)) {
            for (size_t i = 0; i < sys->ncards; i++)
                if (!strcmp(sys->cards[i].name, target + 9))
                    card = (int)i;
        } else if (!strncmp(target, "/dev/nvidia", 11) && isdigit((unsigned char)target[11])) {
            for (size_t i = 0; i < sys->ncards && card < 0; i++)
                if (sys->cards[i].vendor == HL_VENDOR_NVIDIA)
                    card = (int)i;
        }
    }
    closedir(d);
    return card;
}

static void scan_servers(int root, struct hl_system *sys)
{
    const char *dir = "proc";
    DIR *d = open_dir(root, dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) && sys->nservers < HL_MAX_SERVERS) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        char pdir[700], path[768], comm[64];
        snprintf(pdir, sizeof pdir, "%s/%s", dir, e->d_name);
        snprintf(path, sizeof path, "%s/comm", pdir);
        if (!read_text(root, path, comm, sizeof comm))
            continue;
        comm[strcspn(comm, "\n")] = '\0';
        if (!headless_known_server(comm))
            continue;
        struct hl_server *s = &sys->servers[sys->nservers++];
        s->pid = (uint32_t)strtoul(e->d_name, NULL, 10);
        snprintf(s->name, sizeof s->name, "%s", comm);
        s->card = held_card(root, pdir, sys);
    }
    closedir(d);
}

int display_scan(const char *root, struct hl_system *sys)
{
    memset(sys, 0, sizeof *sys);
    int rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = rfd >= 0 ? open_dir(rfd, "sys/class/drm") : NULL;
    if (!d) {
        if (rfd >= 0)
            close(rfd);
        return -1;
    }
    scan_cards(rfd, sys, d);
    closedir(d);
    scan_servers(rfd, sys);
    char *text = malloc(64 * 1024 + 1);
    if (text && read_text(rfd, "etc/X11/xorg.conf", text, 64 * 1024 + 1))
        sys->xorg_conf_nvidia = headless_xorg_names_nvidia(text, strlen(text));
    free(text);
    close(rfd);
    return 0;
}
