/* view: what a capped process is told: its slice as the GPU's total and
 * free memory (CUDA and NVML), and its contexts charged to the budget. */
#ifndef VRAM_SHIM_VIEW_H
#define VRAM_SHIM_VIEW_H

#include "shim/driver.h"

DRIVER_VIEW_WRAPPED(DRIVER_WRAPPER)
DRIVER_NVML_WRAPPED(DRIVER_NVML_WRAPPER)

#endif
