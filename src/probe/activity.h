/* activity: who the driver saw working, per GPU, remembered across samples
 * (the driver keeps only a few seconds): what sets each process's busy_us.
 * Shared by the Linux probe (probe.c) and the Windows one (win/winprobe.c). */
#ifndef VRAM_PROBE_ACTIVITY_H
#define VRAM_PROBE_ACTIVITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"
#include "gpu/nvml.h"

struct activity {
    uint64_t since_us;
    struct nvml_busy *seen;
    size_t n;
    bool have;
};

/* Merges the driver's newest samples for GPU i into a. */
void activity_watch(struct activity *a, struct nvml *n, unsigned i);

/* Gives each process of g its last time seen working (SNAP_HAVE_ACTIVITY);
 * with prune, forgets the processes that left the list. */
void activity_apply(struct activity *a, struct snap_gpu *g, bool prune);

void activity_free(struct activity *a);

#endif
