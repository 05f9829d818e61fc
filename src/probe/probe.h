/* probe: one snapshot of the machine, the GPU layer's figures joined with
 * the host's knowledge of each process, refreshed in place so that a live
 * view can sample the cheap parts often and the costly parts seldom. */
#ifndef VRAM_PROBE_H
#define VRAM_PROBE_H

#include <stddef.h>

#include "core/snapshot.h"

struct probe;

enum probe_what {
    PROBE_MEMORY = 0,        /* memory, power, utilization: always */
    PROBE_PROCS = 1u << 0,   /* NVML's process lists, joined with /proc */
    PROBE_HOLDERS = 1u << 1, /* scan /proc/ * /fd for /dev/nvidia* holders */
    PROBE_SLOW = 1u << 2,    /* modes, limits, links, fan: the costly calls */
    PROBE_ENERGY = 1u << 3,  /* total energy: 3 ms a GPU on an H200 */
    /* per-process utilization samples, remembered across samples: sets
     * busy_us of each process (and SNAP_HAVE_ACTIVITY) */
    PROBE_ACTIVITY = 1u << 4,
    PROBE_ALL = PROBE_PROCS | PROBE_HOLDERS | PROBE_SLOW,
};

/* procroot: "/proc", or a fixture tree for tests. */
int probe_open(struct probe **out, const char *procroot, char *err, size_t errlen);
void probe_close(struct probe *p);

/* The process is about to exit: skip the driver's slow shutdown. */
void probe_exiting(struct probe *p);

/* Refreshes s (zeroed before the first call, then reused). Process arrays
 * are replaced only when PROBE_PROCS is asked for. now_ms: wall clock. */
int probe_sample(struct probe *p, struct snap *s, unsigned what, uint64_t now_ms);

#endif
