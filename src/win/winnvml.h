/* winnvml: NVML on Windows: nvml.dll from the driver's folders, where
 * gpu/nvml.h's nvml_open is defined for the Windows build (gpu/nvmlso.c
 * defines it for Linux). */
#ifndef VRAM_WIN_WINNVML_H
#define VRAM_WIN_WINNVML_H

#include <windows.h>

#include "gpu/nvml.h"

/* Loads a DLL by full path from System32 (name: "pdh.dll"), never from
 * the current or the program's folder, where anyone could have put one of
 * that name. NULL when absent. */
HMODULE winnvml_system_dll(const wchar_t *name);

#endif
