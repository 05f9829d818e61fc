/* headless: the plan that moves a Linux desktop off the NVIDIA card onto
 * another GPU (the "headless hybrid" setup). Pure: what the machine has goes
 * in, the files to write and set aside come out; applying the plan and
 * undoing it is host/rootfs.c's job. */
#ifndef VRAM_CORE_HEADLESS_H
#define VRAM_CORE_HEADLESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HL_MAX_CARDS   8
#define HL_MAX_SERVERS 8
#define HL_MAX_STEPS   6

#define HL_VENDOR_NVIDIA 0x10de
#define HL_VENDOR_INTEL  0x8086
#define HL_VENDOR_AMD    0x1002

struct hl_card {
    char name[16];     /* "card0" */
    unsigned vendor;   /* PCI vendor id */
    char pci[16];      /* "0000:00:02.0" */
    char driver[32];   /* kernel driver, "" when none is bound */
    bool boot_vga;     /* the firmware showed its boot screen here */
    char monitors[96]; /* connected outputs, "HDMI-A-1, DP-2" */
    unsigned nmonitors;
};

struct hl_server {
    uint32_t pid;
    char name[32]; /* "Xorg", "gnome-shell", "kwin_wayland" */
    int card;      /* index into cards of the GPU it holds, -1 if unknown */
};

struct hl_system {
    struct hl_card cards[HL_MAX_CARDS];
    size_t ncards;
    struct hl_server servers[HL_MAX_SERVERS];
    size_t nservers;
    bool xorg_conf_nvidia; /* /etc/X11/xorg.conf exists and names the nvidia driver */
};

enum hl_op {
    HL_WRITE, /* write content at path (the old file, if any, is kept aside) */
    HL_ASIDE, /* move path aside (kept for `off`) */
};

struct hl_step {
    enum hl_op op;
    char path[96]; /* relative to the root, no leading '/' */
    char why[160];
    char content[1024];
};

struct hl_plan {
    int display; /* the card that takes the desktop */
    struct hl_step steps[HL_MAX_STEPS];
    size_t nsteps;
    char after[320]; /* what the user must do for it to take effect */
};

/* The display servers vram knows how to move, by process name. */
bool headless_known_server(const char *comm);

/* "NVIDIA", "Intel", "AMD" or "other". */
const char *headless_vendor_name(unsigned vendor);

/* The plan for `vram headless on`. Returns 0, or -1 with why filled: no
 * NVIDIA card, no other GPU with a driver to take the display. */
int headless_plan(const struct hl_system *sys, struct hl_plan *plan, char *why, size_t len);

/* Whether an xorg.conf text selects the nvidia driver (a Driver "nvidia"
 * line outside comments). */
bool headless_xorg_names_nvidia(const char *text, size_t len);

/* "PCI:1:0:0" (Xorg's decimal BusID) from "0000:01:00.0"; -1 if malformed. */
int headless_xorg_busid(const char *pci, char *out, size_t len);

#endif
