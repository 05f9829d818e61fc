/* clockcache: each GPU's maximum clocks, kept in the user's cache under
 * the GPU's UUID and the driver's version, so that a `vram status --json`
 * after the first asks the driver nothing for them. */
#ifndef VRAM_PROBE_CLOCKCACHE_H
#define VRAM_PROBE_CLOCKCACHE_H

#include <stdbool.h>

#include "core/snapshot.h"

/* Gives every GPU of s the maximum clocks the cache holds for its UUID
 * and s's driver version (SNAP_HAVE_MAX_CLOCKS set); true when it held
 * them for every GPU, so that none need be asked. */
bool clockcache_fill(struct snap *s);

/* Keeps the maximum clocks of s's GPUs, when every GPU has them. */
void clockcache_save(const struct snap *s);

#endif
