/* vmm: the wrappers of the driver's virtual memory entry points: physical
 * allocations are charged when created, and with fast swap on, recorded
 * with their mappings so that a suspend can move them. */
#ifndef VRAM_SHIM_VMM_H
#define VRAM_SHIM_VMM_H

#include "gpu/cuda_api.h"

#define VMM_CUDA_HOOKS(X)                                                                          \
    X(cuMemCreate, (CUmemGenericAllocationHandle * h, size_t size,                                 \
                    const CUmemAllocationProp *prop, unsigned long long flags))                    \
    X(cuMemRelease, (CUmemGenericAllocationHandle h))                                              \
    X(cuMemImportFromShareableHandle,                                                              \
      (CUmemGenericAllocationHandle * h, void *os_handle, int type))                               \
    X(cuMemMap, (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle h,      \
                 unsigned long long flags))                                                        \
    X(cuMemUnmap, (CUdeviceptr ptr, size_t size))                                                  \
    X(cuMemAddressReserve,                                                                         \
      (CUdeviceptr * ptr, size_t size, size_t align, CUdeviceptr addr, unsigned long long flags))  \
    X(cuMemAddressFree, (CUdeviceptr ptr, size_t size))                                            \
    X(cuMemSetAccess, (CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count))   \
    X(cuMemRetainAllocationHandle, (CUmemGenericAllocationHandle * h, void *addr))                 \
    X(cuMemGetAllocationPropertiesFromHandle,                                                      \
      (CUmemAllocationProp * prop, CUmemGenericAllocationHandle h))                                \
    X(cuMemExportToShareableHandle,                                                                \
      (void *out, CUmemGenericAllocationHandle h, int type, unsigned long long flags))

#endif
