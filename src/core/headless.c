/* headless: the files that make a Linux desktop leave the NVIDIA card.
 *
 * Each display stack is told in its own way, and all of them are written so
 * that switching sessions (GNOME on X, then Plasma on Wayland) keeps the
 * card free:
 *   - Xorg: a Device section binding the modesetting driver to the other
 *     GPU's BusID, with AutoAddGPU off so the NVIDIA card does not join as
 *     a secondary GPU (which would give it a context and a framebuffer);
 *   - Mutter (GNOME on Wayland): the udev tag mutter-device-ignore on the
 *     NVIDIA card;
 *   - KWin and wlroots compositors: their device list variables, pointing at
 *     a udev symlink because card numbers change between boots and the
 *     by-path names contain ':', the lists' separator.
 * An existing xorg.conf that selects the nvidia driver would win over the
 * snippet, so it is set aside (and put back by `off`). */
#include "core/headless.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const known_servers[] = {
    "Xorg",     "X",      "Xwayland", "gnome-shell", "kwin_wayland", "kwin_x11", "sway",
    "Hyprland", "weston", "mutter",   "cage",        "labwc",        "wayfire",
};

bool headless_known_server(const char *comm)
{
    for (size_t i = 0; i < sizeof known_servers / sizeof known_servers[0]; i++)
        if (!strcmp(comm, known_servers[i]))
            return true;
    return false;
}

const char *headless_vendor_name(unsigned vendor)
{
    switch (vendor) {
    case HL_VENDOR_NVIDIA:
        return "NVIDIA";
    case HL_VENDOR_INTEL:
        return "Intel";
    case HL_VENDOR_AMD:
        return "AMD";
    default:
        return "other";
    }
}

/* "DDDD:BB:SS.F", hex digits, nothing around: sysfs's PCI_SLOT_NAME. */
static bool pci_shape(const char *pci)
{
    static const char shape[] = "xxxx:xx:xx.x";
    for (size_t i = 0; i < sizeof shape; i++) {
        bool ok = shape[i] == 'x' ? isxdigit((unsigned char)pci[i]) : pci[i] == shape[i];
        if (!ok)
            return false;
    }
    return true;
}

int headless_xorg_busid(const char *pci, char *out, size_t len)
{
    unsigned dom, bus, dev, fn;
    if (!pci_shape(pci) || sscanf(pci, "%4x:%2x:%2x.%1x", &dom, &bus, &dev, &fn) != 4 ||
        dev > 0x1f || fn > 7)
        return -1;
    if (dom)
        snprintf(out, len, "PCI:%u@%u:%u:%u", bus, dom, dev, fn);
    else
        snprintf(out, len, "PCI:%u:%u:%u", bus, dev, fn);
    return 0;
}

bool headless_xorg_names_nvidia(const char *text, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t end = i;
        while (end < len && text[end] != '\n')
            end++;
        size_t k = i;
        while (k < end && isspace((unsigned char)text[k]))
            k++;
        /* Driver "nvidia", case-insensitive keyword, comments skipped */
        if (end - k > 6 && !strncasecmp(text + k, "driver", 6) &&
            isspace((unsigned char)text[k + 6])) {
            k += 6;
            while (k < end && isspace((unsigned char)text[k]))
                k++;
            if (end - k >= 8 && !strncmp(text + k, "\"nvidia\"", 8))
                return true;
        }
        i = end + 1;
    }
    return false;
}

/* The GPU that should drive the display: one with a driver, not NVIDIA;
 * the firmware's boot GPU first, then one with a monitor plugged in. */
static int pick_display(const struct hl_system *sys)
{
    int best = -1, score = -1;
    for (size_t i = 0; i < sys->ncards; i++) {
        const struct hl_card *c = &sys->cards[i];
        if (c->vendor == HL_VENDOR_NVIDIA || !c->driver[0])
            continue;
        int s = (c->boot_vga ? 2 : 0) + (c->nmonitors ? 1 : 0);
        if (s > score) {
            best = (int)i;
            score = s;
        }
    }
    return best;
}

static struct hl_step *step(struct hl_plan *p, enum hl_op op, const char *path, const char *why)
{
    struct hl_step *s = &p->steps[p->nsteps++];
    memset(s, 0, sizeof *s);
    s->op = op;
    snprintf(s->path, sizeof s->path, "%s", path);
    snprintf(s->why, sizeof s->why, "%s", why);
    return s;
}

#define HEADER "# Written by `vram headless on`; `vram headless off` removes it.\n"

int headless_plan(const struct hl_system *sys, struct hl_plan *p, char *why, size_t len)
{
    memset(p, 0, sizeof *p);
    size_t nv = 0;
    for (size_t i = 0; i < sys->ncards; i++)
        nv += sys->cards[i].vendor == HL_VENDOR_NVIDIA;
    if (nv == 0) {
        snprintf(why, len, "no NVIDIA GPU in /sys/class/drm: there is no card to free");
        return -1;
    }
    p->display = pick_display(sys);
    if (p->display < 0) {
        snprintf(why, len,
                 "no other GPU can take the display: enable the integrated GPU in the "
                 "firmware settings (often \"iGPU multi-monitor\"), or add a second card");
        return -1;
    }
    const struct hl_card *d = &sys->cards[p->display];
    char busid[32];
    if (headless_xorg_busid(d->pci, busid, sizeof busid) < 0) {
        snprintf(why, len, "%s has no PCI address vram can read (\"%s\")", d->name, d->pci);
        return -1;
    }
    const char *vendor = headless_vendor_name(d->vendor);
    struct hl_step *s;

    if (sys->xorg_conf_nvidia)
        step(p, HL_ASIDE, "etc/X11/xorg.conf",
             "it selects the nvidia driver and would win over the snippet below");

    s = step(p, HL_WRITE, "etc/X11/xorg.conf.d/20-vram-headless.conf",
             "Xorg: the desktop on the other GPU, the NVIDIA card not added as a second GPU");
    snprintf(s->content, sizeof s->content,
             HEADER "# Xorg drives the display with the %s GPU (%s); the NVIDIA card is left\n"
                    "# to compute.\n"
                    "Section \"ServerFlags\"\n"
                    "    Option \"AutoAddGPU\" \"false\"\n"
                    "EndSection\n\n"
                    "Section \"Device\"\n"
                    "    Identifier \"vram-display\"\n"
                    "    Driver     \"modesetting\"\n"
                    "    BusID      \"%s\"\n"
                    "EndSection\n",
             vendor, d->pci, busid);

    s = step(p, HL_WRITE, "etc/udev/rules.d/61-vram-headless.rules",
             "GNOME on Wayland ignores the NVIDIA card; a stable name for the display GPU");
    size_t at = (size_t)snprintf(s->content, sizeof s->content,
                                 HEADER "# Mutter (GNOME on Wayland) leaves these cards alone:\n");
    for (size_t i = 0; i < sys->ncards && at < sizeof s->content; i++)
        if (sys->cards[i].vendor == HL_VENDOR_NVIDIA)
            at += (size_t)snprintf(s->content + at, sizeof s->content - at,
                                   "SUBSYSTEM==\"drm\", KERNEL==\"card[0-9]*\", "
                                   "KERNELS==\"%s\", TAG+=\"mutter-device-ignore\"\n",
                                   sys->cards[i].pci);
    if (at < sizeof s->content)
        snprintf(s->content + at, sizeof s->content - at,
                 "# A name that survives renumbering, for KWin and wlroots:\n"
                 "SUBSYSTEM==\"drm\", KERNEL==\"card[0-9]*\", KERNELS==\"%s\", "
                 "SYMLINK+=\"dri/vram-display\"\n",
                 d->pci);

    s = step(p, HL_WRITE, "etc/environment.d/90-vram-headless.conf",
             "KWin (Plasma) and wlroots compositors (sway, Hyprland) use only the display GPU");
    snprintf(s->content, sizeof s->content,
             HEADER "KWIN_DRM_DEVICES=/dev/dri/vram-display\n"
                    "WLR_DRM_DEVICES=/dev/dri/vram-display\n"
                    "AQ_DRM_DEVICES=/dev/dri/vram-display\n");

    at = (size_t)snprintf(p->after, sizeof p->after,
                          "reboot (the udev rule is read at boot; Xorg and the compositors "
                          "read theirs when the session starts)");
    if (!d->nmonitors && at < sizeof p->after)
        snprintf(p->after + at, sizeof p->after - at,
                 ", and plug the monitor into the %s GPU's output (the motherboard's): "
                 "none is connected there now",
                 vendor);
    return 0;
}
