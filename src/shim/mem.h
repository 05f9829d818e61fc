/* mem: the wrappers of the driver's allocation entry points (plain,
 * pitched, managed, stream-ordered, arrays, IPC): each charges the budget
 * before the driver is asked and records what it charged. */
#ifndef VRAM_SHIM_MEM_H
#define VRAM_SHIM_MEM_H

#include "shim/driver.h"

DRIVER_MEM_WRAPPED(DRIVER_WRAPPER)

#endif
