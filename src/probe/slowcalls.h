/* slowcalls: a sample's slow tier of NVML calls (gpu/nvml.h's parts), on a
 * few threads of its own while the sample's thread reads the rest. */
#ifndef VRAM_PROBE_SLOWCALLS_H
#define VRAM_PROBE_SLOWCALLS_H

#include "core/snapshot.h"
#include "gpu/nvml.h"

struct slowcalls;

/* Starts asking the parts in `parts` (bits: 1u << enum nvml_part) of every
 * GPU of s. Each part writes its own fields only, so the caller may fill
 * the others meanwhile; s->gpus must stay where it is, and its have bits
 * are set by slowcalls_finish. NULL when there is nothing to ask, or no
 * memory: then the parts were asked in turn, on this thread, and s is
 * complete. */
struct slowcalls *slowcalls_start(struct nvml *n, struct snap *s, unsigned parts);

/* Asks what no thread has taken yet, waits for the items under way (not
 * for the threads, which end on their own), sets each GPU's have bits of
 * the parts; c is not to be used again. NULL: nothing to do. */
void slowcalls_finish(struct slowcalls *c);

#endif
