/* activity: who the driver saw working, per GPU, remembered across samples
 * (the driver keeps only a few seconds): what sets each process's busy_us,
 * and its share of the GPU (sm_util and the rest). Shared by the Linux
 * probe (probe.c) and the Windows one (win/winprobe.c). */
#ifndef VRAM_PROBE_ACTIVITY_H
#define VRAM_PROBE_ACTIVITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"
#include "gpu/nvml.h"

/* A sample older than this says nothing of now: the driver samples a
 * working process several times a second, so a process without a newer
 * one did no work meanwhile. */
#define ACTIVITY_FRESH_US 2000000u

struct activity_seen {
    uint32_t pid;
    uint64_t busy_us;    /* the newest sample with SM or memory work, 0: none */
    struct nvml_busy at; /* the newest sample of it */
};

struct activity {
    uint64_t since_us;
    struct activity_seen *seen;
    size_t n;
    bool have;
};

/* Merges the driver's newest samples for GPU i into a. */
void activity_watch(struct activity *a, struct nvml *n, unsigned i);

/* Gives each process of g its last time seen working (SNAP_HAVE_ACTIVITY)
 * and its share of the GPU in a sample newer than ACTIVITY_FRESH_US before
 * now_us (0 without one); with prune, forgets the processes that left the
 * list. */
void activity_apply(struct activity *a, struct snap_gpu *g, bool prune, uint64_t now_us);

void activity_free(struct activity *a);

#endif
