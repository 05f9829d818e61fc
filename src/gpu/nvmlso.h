/* nvmlso: NVML on Linux, libnvidia-ml.so.1 by dlopen: where gpu/nvml.h's
 * nvml_open is defined for the Linux build (win/winnvml.c defines it for
 * Windows). Nothing else to declare. */
#ifndef VRAM_GPU_NVMLSO_H
#define VRAM_GPU_NVMLSO_H

#include "gpu/nvml.h"

#endif
