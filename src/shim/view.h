/* view: what a capped process is told: its slice as the GPU's total and
 * free memory (CUDA and NVML), and its contexts charged to the budget. */
#ifndef VRAM_SHIM_VIEW_H
#define VRAM_SHIM_VIEW_H

#include "gpu/cuda_api.h"
#include "gpu/nvml_api.h"

typedef void *CUexecAffinityParamPtr;

#define VIEW_CUDA_HOOKS(X)                                                                         \
    X(cuMemGetInfo_v2, (size_t * free_b, size_t * total))                                          \
    X(cuDeviceTotalMem_v2, (size_t * bytes, CUdevice dev))                                         \
    X(cuDevicePrimaryCtxRetain, (CUcontext * ctx, CUdevice dev))                                   \
    X(cuCtxDestroy_v2, (CUcontext ctx))                                                            \
    X(cuCtxCreate_v2, (CUcontext * ctx, unsigned flags, CUdevice dev))                             \
    X(cuCtxCreate_v3,                                                                              \
      (CUcontext * ctx, CUexecAffinityParamPtr params, int n, unsigned flags, CUdevice dev))       \
    X(cuCtxCreate_v4, (CUcontext * ctx, void *params, unsigned flags, CUdevice dev))

#define VIEW_NVML_HOOKS(X)                                                                         \
    X(nvmlDeviceGetMemoryInfo, (nvmlDevice_t d, nvmlMemory_v1_t * m))                              \
    X(nvmlDeviceGetMemoryInfo_v2, (nvmlDevice_t d, nvmlMemory_v2_t * m))

#endif
