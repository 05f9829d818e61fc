/* pcie: each GPU's PCIe throughput, read on a thread of its own. The
 * driver counts a direction's bytes for 20 ms while the caller waits
 * (nvmlDeviceGetPcieThroughput), 40 ms a GPU for both: a live view's
 * refresh takes the latest figures instead of waiting for them. */
#ifndef VRAM_PROBE_PCIE_H
#define VRAM_PROBE_PCIE_H

#include "core/snapshot.h"
#include "gpu/nvml.h"

struct pcie;

/* A reader of n's GPUs (its thread starts at the first pcie_ask); NULL
 * when out of memory. n must outlive it. */
struct pcie *pcie_new(const struct nvml *n);

/* Reads every GPU once more, unless a reading is under way. */
void pcie_ask(struct pcie *p);

/* The latest figures into s's GPUs (SNAP_HAVE_PCIE_THROUGHPUT where one
 * was read; none before the first reading ends, nor where the driver has
 * no such counter). */
void pcie_apply(struct pcie *p, struct snap *s);

/* Stops the thread (after the GPU it is reading, 40 ms at most). */
void pcie_free(struct pcie *p);

#endif
