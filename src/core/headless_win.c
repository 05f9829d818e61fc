/* headless_win: what `vram headless on` changes on Windows.
 *
 * Disabling the NVIDIA adapter is what frees all of its memory from the
 * desktop, but a disabled device has no driver loaded, so CUDA cannot use
 * it either until it is enabled again: that step is opt-in and the plan
 * says so. */
#include "core/headless_win.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/headless.h"

unsigned headless_win_vendor(const char *id)
{
    for (const char *p = id; *p; p++)
        if (!strncmp(p, "VEN_", 4)) {
            unsigned v = 0;
            for (int i = 4; i < 8; i++) {
                if (!isxdigit((unsigned char)p[i]))
                    return 0;
                v = v * 16 + (unsigned)(isdigit((unsigned char)p[i])
                                            ? p[i] - '0'
                                            : tolower((unsigned char)p[i]) - 'a' + 10);
            }
            return v;
        }
    return 0;
}

int headless_win_plan(const struct hw_state *s, bool disable_device, struct hw_plan *p, char *why,
                      size_t len)
{
    memset(p, 0, sizeof *p);
    p->display = -1;
    size_t nv = 0;
    for (size_t i = 0; i < s->nadapters; i++) {
        unsigned v = s->adapters[i].vendor;
        if (v == HL_VENDOR_NVIDIA)
            nv++;
        else if (v && p->display < 0)
            p->display = (int)i; /* VEN_0000: a virtual adapter, not a GPU */
    }
    if (nv == 0) {
        snprintf(why, len, "no NVIDIA display adapter: there is no card to free");
        return -1;
    }
    if (p->display < 0) {
        snprintf(why, len,
                 "no other GPU can take the display: enable the integrated GPU in the "
                 "firmware settings (often \"iGPU multi-monitor\") and plug the monitor "
                 "into the motherboard");
        return -1;
    }
    p->set_hwsch = s->hwsch != HW_HWSCH_ON;
    for (size_t i = 0; disable_device && i < s->nadapters; i++)
        if (s->adapters[i].vendor == HL_VENDOR_NVIDIA)
            snprintf(p->disable[p->ndisable++], HW_ID_MAX, "%s", s->adapters[i].id);
    if (!p->set_hwsch && !p->ndisable) {
        snprintf(why, len, "hardware-accelerated GPU scheduling is already on: nothing to do");
        return -1;
    }
    return 0;
}
