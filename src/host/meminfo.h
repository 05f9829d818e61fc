/* meminfo: how much host RAM may still be taken without pushing anything
 * out: the kernel's MemAvailable, and, for a process in a cgroup with a
 * memory limit (a systemd unit with MemoryMax=, a container), what is left
 * under that limit: the OOM killer acts on whichever comes first. */
#ifndef VRAM_HOST_MEMINFO_H
#define VRAM_HOST_MEMINFO_H

#include <stdint.h>

/* Bytes available to this process now; UINT64_MAX when nothing can be
 * read (no /proc). */
uint64_t meminfo_available(void);

/* MemAvailable from the text of /proc/meminfo: bytes, or UINT64_MAX when
 * the line is missing. Pure, for tests. */
uint64_t meminfo_parse(const char *text);

#endif
