/* mem: the wrappers of the driver's allocation entry points (plain,
 * pitched, managed, stream-ordered, arrays, IPC): each charges the budget
 * before the driver is asked and records what it charged. */
#ifndef VRAM_SHIM_MEM_H
#define VRAM_SHIM_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "gpu/cuda_api.h"
#include "shim/atab.h"

#define MEM_CUDA_HOOKS(X)                                                                          \
    X(cuMemAlloc_v2, (CUdeviceptr * dptr, size_t size))                                            \
    X(cuMemAllocPitch_v2,                                                                          \
      (CUdeviceptr * dptr, size_t * pitch, size_t width, size_t height, unsigned elem))            \
    X(cuMemAllocManaged, (CUdeviceptr * dptr, size_t size, unsigned flags))                        \
    X(cuMemFree_v2, (CUdeviceptr dptr))                                                            \
    X(cuMemAllocAsync, (CUdeviceptr * dptr, size_t size, CUstream stream))                         \
    X(cuMemAllocAsync_ptsz, (CUdeviceptr * dptr, size_t size, CUstream stream))                    \
    X(cuMemAllocFromPoolAsync,                                                                     \
      (CUdeviceptr * dptr, size_t size, CUmemoryPool pool, CUstream stream))                       \
    X(cuMemAllocFromPoolAsync_ptsz,                                                                \
      (CUdeviceptr * dptr, size_t size, CUmemoryPool pool, CUstream stream))                       \
    X(cuMemFreeAsync, (CUdeviceptr dptr, CUstream stream))                                         \
    X(cuMemFreeAsync_ptsz, (CUdeviceptr dptr, CUstream stream))                                    \
    X(cuArrayCreate_v2, (CUarray * arr, const CUDA_ARRAY_DESCRIPTOR *desc))                        \
    X(cuArray3DCreate_v2, (CUarray * arr, const CUDA_ARRAY3D_DESCRIPTOR *desc))                    \
    X(cuMipmappedArrayCreate,                                                                      \
      (CUmipmappedArray * arr, const CUDA_ARRAY3D_DESCRIPTOR *desc, unsigned levels))              \
    X(cuArrayDestroy, (CUarray arr))                                                               \
    X(cuMipmappedArrayDestroy, (CUmipmappedArray arr))                                             \
    X(cuIpcOpenMemHandle_v2, (CUdeviceptr * dptr, CUipcMemHandle h, unsigned flags))               \
    X(cuIpcCloseMemHandle, (CUdeviceptr dptr))

/* A free gives back what its allocation charged, under whichever of kinds
 * it was recorded. */
void mem_give_back(uint64_t key, const enum atab_kind *kinds, size_t nkinds);

#endif
