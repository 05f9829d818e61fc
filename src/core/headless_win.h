/* headless_win: the plan for `vram headless` on Windows, pure so that it is
 * tested on any system. What the original PowerShell switch did: turn on
 * hardware-accelerated GPU scheduling (HwSchMode = 2 under
 * HKLM\SYSTEM\CurrentControlSet\Control\GraphicsDrivers) and, only when
 * asked, disable the NVIDIA display adapter (pnputil /disable-device). */
#ifndef VRAM_CORE_HEADLESS_WIN_H
#define VRAM_CORE_HEADLESS_WIN_H

#include <stdbool.h>
#include <stddef.h>

#define HW_MAX_ADAPTERS 8
#define HW_ID_MAX       200
#define HW_HWSCH_ON     2

struct hw_adapter {
    char id[HW_ID_MAX]; /* device instance id, "PCI\VEN_10DE&DEV_2C05&..." */
    unsigned vendor;    /* from VEN_xxxx, 0 when absent */
};

struct hw_state {
    long hwsch; /* HwSchMode, -1 when the value is absent */
    struct hw_adapter adapters[HW_MAX_ADAPTERS];
    size_t nadapters;
};

struct hw_plan {
    bool set_hwsch; /* to HW_HWSCH_ON */
    char disable[HW_MAX_ADAPTERS][HW_ID_MAX];
    size_t ndisable;
    int display; /* the adapter that keeps the desktop */
};

/* The PCI vendor in a device instance id ("...VEN_10DE&..."), 0 if none. */
unsigned headless_win_vendor(const char *instance_id);

/* Returns 0, or -1 with why: no NVIDIA adapter, no other adapter to take
 * the display, nothing to do. */
int headless_win_plan(const struct hw_state *s, bool disable_device, struct hw_plan *p, char *why,
                      size_t len);

#endif
