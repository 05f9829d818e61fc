/* peer: the wrapped peer access entry points. cuCtxEnablePeerAccess is per
 * pair of contexts, VMM access per device: with fast swap on, the device
 * of a context that enabled access to another's memory is given access to
 * libvramcap's allocations there too (reach.h), and loses it once no pair
 * of contexts opens those devices any more. */
#ifndef VRAM_SHIM_PEER_H
#define VRAM_SHIM_PEER_H

#include "shim/driver.h"

DRIVER_PEER_WRAPPED(DRIVER_WRAPPER)

#endif
