/* cpuuse: each GPU process's CPU %, from its CPU time in two samples: the
 * last reading of every process, kept from one process list to the next. */
#ifndef VRAM_PROBE_CPUUSE_H
#define VRAM_PROBE_CPUUSE_H

#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"

struct cpuuse_seen {
    uint32_t pid;
    uint64_t start_time; /* the same pid later is another process */
    uint64_t cpu_ms, at_ms;
};

struct cpuuse {
    struct cpuuse_seen *seen;
    size_t n;
};

/* Sets cpu_pct (and cpu_known) of each process of s that the last call saw
 * too, over the time between (now_ms: when s's host fields were read),
 * then remembers s's readings for the next call. */
void cpuuse_apply(struct cpuuse *c, struct snap *s, uint64_t now_ms);

void cpuuse_free(struct cpuuse *c);

#endif
