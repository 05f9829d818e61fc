/* ctxcost: what a process's first context on a GPU costs, measured around
 * its making: the GPU's free memory just before and just after (what the
 * process itself sees, whoever NVML takes it for), and NVML's figure for
 * the process where NVML names it. A process in a PID namespace of its own
 * (a container) is listed by NVML under a pid it does not know as its
 * own: the drop in free memory is then all there is, and enough. */
#ifndef VRAM_SHIM_CTXCOST_H
#define VRAM_SHIM_CTXCOST_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu/cuda_api.h"
#include "gpu/nvml_api.h"
#include "ipc/group.h"

struct ctxcost {
    void *lib; /* libnvidia-ml, NULL: NVML cannot be asked */
    nvmlReturn_t (*fini)(void);
    nvmlReturn_t (*meminfo)(nvmlDevice_t, nvmlMemory_v1_t *);
    nvmlReturn_t (*procs)(nvmlDevice_t, unsigned *, void *);
    nvmlDevice_t dev;
    bool before_known;
    uint64_t free0;  /* the GPU's free memory before the context */
    uint64_t group0; /* what the group had charged then */
};

/* Before the context is made: NVML opened (the slow part: nothing is
 * uncharged while it runs) and the GPU's free memory read. */
void ctxcost_begin(struct ctxcost *c, CUdevice dev, const struct group *g);

/* Right after the context is made: what the GPU's free memory dropped by,
 * with what the group's other members freed meanwhile added back, so that
 * their frees do not make the context look smaller. 0 when NVML cannot
 * say. One quick query: the caller charges it at once. */
uint64_t ctxcost_quick(struct ctxcost *c, const struct group *g);

/* NVML's figure for this process on the GPU, when NVML lists it under its
 * own pid (it may be slow to answer): true and *bytes, else false. */
bool ctxcost_named(struct ctxcost *c, uint64_t *bytes);

void ctxcost_end(struct ctxcost *c);

#endif
