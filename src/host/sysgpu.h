/* sysgpu: what the OS says about display hardware and GPU daemons: other
 * GPUs in /sys/class/drm that could drive a display, and whether a process
 * of a given name runs (the MPS control daemon). Roots are parameters so
 * that fixtures can stand in for /sys and /proc. */
#ifndef VRAM_HOST_SYSGPU_H
#define VRAM_HOST_SYSGPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A non-NVIDIA GPU under SYSROOT/class/drm (Intel, AMD, ...): true and its
 * description in name. */
bool sysgpu_other_gpu(const char *sysroot, char *name, size_t len);

/* The pid of a process whose comm is name under PROCROOT, 0 if none. */
uint32_t sysgpu_find_process(const char *procroot, const char *name);

#endif
