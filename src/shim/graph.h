/* graph: what fast swap does with CUDA graphs' own memory (allocation
 * nodes, captured cuMemAllocAsync). The driver backs a graph's allocations
 * with memory it maps at the graph's fixed addresses when a launch
 * allocates them, and keeps it cached for the graph once freed; a suspend
 * gives that cache back (cuDeviceGraphMemTrim) and the next launch after
 * the resume maps memory again, at the same addresses. An allocation a
 * launch made and nobody freed yet holds data libvramcap cannot move:
 * then the driver's checkpoint must. Graphs themselves, and the addresses
 * their kernels use in memory fast swap moves, need nothing. */
#ifndef VRAM_SHIM_GRAPH_H
#define VRAM_SHIM_GRAPH_H

#include <stddef.h>
#include <stdint.h>

/* Why device dev (its context current) cannot be swapped fast: live graph
 * allocations, said in why; NULL when none. */
const char *graph_blocker(int dev, char *why, size_t len);

/* Gives back the graph memory cached on dev (its context current, its work
 * done): 0, or -1 with why when some is still held. */
int graph_trim(int dev, char *why, size_t len);

#endif
