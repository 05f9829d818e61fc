/* winpdh: Windows's GPU performance counters, through pdh.dll loaded at run
 * time from System32: "\GPU Process Memory(*)\Dedicated Usage", what Task
 * Manager shows as each process's dedicated GPU memory. */
#ifndef VRAM_WIN_WINPDH_H
#define VRAM_WIN_WINPDH_H

#include <stddef.h>

#include "core/wddm.h"

/* Reads every instance into set (core/wddm.c parses the names). 0, or -1
 * with why: no pdh.dll, or a Windows without GPU counters (before 10 1709). */
int winpdh_read(struct wddm_set *set, char *why, size_t len);

#endif
