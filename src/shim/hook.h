/* hook: the doors between a program and the driver (the dynamic linker,
 * dlsym, cuGetProcAddress), through which libvramcap hands out its
 * wrappers: every entry point driver.h lists as wrapped, each defined by
 * the file that driver.h names (mem.c, vmm.c, view.c, peer.c, mempool.c),
 * whose header declares it. */
#ifndef VRAM_SHIM_HOOK_H
#define VRAM_SHIM_HOOK_H

#include "shim/driver.h"

DRIVER_HOOK_WRAPPED(DRIVER_WRAPPER)

#endif
