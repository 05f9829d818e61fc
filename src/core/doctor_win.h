/* doctor_win: doctor's findings on Windows: the same rules (core/doctor.c),
 * with fixes that name what exists there, and what the Windows desktop adds:
 * hardware-accelerated GPU scheduling, what `vram headless on` gives back,
 * a compute process holding memory while the GPU does nothing. Pure. */
#ifndef VRAM_CORE_DOCTOR_WIN_H
#define VRAM_CORE_DOCTOR_WIN_H

#include <stdbool.h>
#include <stddef.h>

#include "core/doctor.h"

struct doc_win {
    long hwsch;           /* HwSchMode, -1 when absent (Windows' default) */
    bool hwsch_known;     /* the registry could be read */
    bool igpu;            /* another display adapter could take the desktop */
    char igpu_name[64];   /* its device instance id, shortened */
    bool headless_on;     /* vram headless on was applied (and not undone) */
};

/* Fills out (up to max) and returns how many findings there are. h gives
 * the watch (--idle) and the time; its Linux facts (MPS, igpu) are unused. */
size_t doctor_win_examine(const struct snap *s, const struct doc_host *h, const struct doc_win *w,
                          struct doc_finding *out, size_t max);

#endif
