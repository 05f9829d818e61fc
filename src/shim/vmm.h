/* vmm: the wrappers of the driver's virtual memory entry points: physical
 * allocations are charged when created, and with fast swap on, recorded
 * with their mappings so that a suspend can move them. */
#ifndef VRAM_SHIM_VMM_H
#define VRAM_SHIM_VMM_H

#include "shim/driver.h"

DRIVER_VMM_WRAPPED(DRIVER_WRAPPER)

#endif
