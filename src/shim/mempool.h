/* mempool: the wrapped entry points of memory pools (CUDA's stream-ordered
 * pools: the pools themselves, a device's default and current pool) and
 * the synchronizes at which a pool gives memory back: with fast swap on, libvramcap's own
 * pools answer (ownpool.c); otherwise, and for the driver's pools, the
 * driver. */
#ifndef VRAM_SHIM_MEMPOOL_H
#define VRAM_SHIM_MEMPOOL_H

#include "shim/driver.h"

DRIVER_MEMPOOL_WRAPPED(DRIVER_WRAPPER)

#endif
