/* winprobe: probe/probe.h on Windows: NVML's figures joined with the
 * process table (win/winproc.c), and where WDDM hides a process's memory
 * from NVML, Windows's own GPU counters (win/winpdh.c, core/wddm.c). The
 * Windows build links this instead of probe/probe.c. */
#ifndef VRAM_WIN_WINPROBE_H
#define VRAM_WIN_WINPROBE_H

#include "probe/probe.h"

/* Why the GPU counters gave no figures at the last sample that needed
 * them, "" when they did or were not needed. */
const char *winprobe_counters_why(const struct probe *p);

#endif
