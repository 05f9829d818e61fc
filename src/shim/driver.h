/* driver: the driver's entry points as libvramcap calls them, past its own
 * wrappers: each one's real address (real_NAME), looked up once libcuda
 * (libnvidia-ml) is loaded. Every entry point libvramcap wraps is listed
 * here with its parameters, under the file that wraps it (that file's
 * header declares its wrappers, and hook.c hands them out in place of the
 * real ones); then those it only calls. The ground floor of libvramcap:
 * every part of it may call the driver, and this includes none of them. */
#ifndef VRAM_SHIM_DRIVER_H
#define VRAM_SHIM_DRIVER_H

#include "gpu/cuda_api.h"
#include "gpu/nvml_api.h"

typedef void *CUexecAffinityParamPtr;

/* hook.c: the lookups */
#define DRIVER_HOOK_WRAPPED(X)                                                                     \
    X(cuGetProcAddress, (const char *sym, void **pfn, int ver, cuuint64_t flags))                  \
    X(cuGetProcAddress_v2, (const char *sym, void **pfn, int ver, cuuint64_t flags, int *status))

/* mem.c: allocations (plain, pitched, managed, stream-ordered, arrays, IPC) */
#define DRIVER_MEM_WRAPPED(X)                                                                      \
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
    X(cuIpcGetMemHandle, (CUipcMemHandle * h, CUdeviceptr p))                                      \
    X(cuIpcOpenMemHandle_v2, (CUdeviceptr * dptr, CUipcMemHandle h, unsigned flags))               \
    X(cuIpcCloseMemHandle, (CUdeviceptr dptr))

/* vmm.c: virtual memory */
#define DRIVER_VMM_WRAPPED(X)                                                                      \
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

/* view.c: what a capped process is told, and its contexts */
#define DRIVER_VIEW_WRAPPED(X)                                                                     \
    X(cuMemGetInfo_v2, (size_t * free_b, size_t * total))                                          \
    X(cuDeviceTotalMem_v2, (size_t * bytes, CUdevice dev))                                         \
    X(cuDevicePrimaryCtxRetain, (CUcontext * ctx, CUdevice dev))                                   \
    X(cuCtxDestroy_v2, (CUcontext ctx))                                                            \
    X(cuCtxCreate_v2, (CUcontext * ctx, unsigned flags, CUdevice dev))                             \
    X(cuCtxCreate_v3,                                                                              \
      (CUcontext * ctx, CUexecAffinityParamPtr params, int n, unsigned flags, CUdevice dev))       \
    X(cuCtxCreate_v4, (CUcontext * ctx, void *params, unsigned flags, CUdevice dev))

/* peer.c: peer access */
#define DRIVER_PEER_WRAPPED(X)                                                                     \
    X(cuCtxEnablePeerAccess, (CUcontext peer, unsigned flags))                                     \
    X(cuCtxDisablePeerAccess, (CUcontext peer))

/* mempool.c: memory pools, and the synchronizes at which they give memory
 * back */
#define DRIVER_MEMPOOL_WRAPPED(X)                                                                  \
    X(cuMemPoolCreate, (CUmemoryPool * pool, const CUmemPoolProps *props))                         \
    X(cuMemPoolDestroy, (CUmemoryPool pool))                                                       \
    X(cuMemPoolTrimTo, (CUmemoryPool pool, size_t keep))                                           \
    X(cuMemPoolSetAttribute, (CUmemoryPool pool, int attr, void *value))                           \
    X(cuMemPoolGetAttribute, (CUmemoryPool pool, int attr, void *value))                           \
    X(cuMemPoolSetAccess, (CUmemoryPool pool, const CUmemAccessDesc *desc, size_t count))          \
    X(cuMemPoolGetAccess, (int *flags, CUmemoryPool pool, CUmemLocation *loc))                     \
    X(cuDeviceGetDefaultMemPool, (CUmemoryPool * pool, CUdevice dev))                              \
    X(cuDeviceGetMemPool, (CUmemoryPool * pool, CUdevice dev))                                     \
    X(cuDeviceSetMemPool, (CUdevice dev, CUmemoryPool pool))                                       \
    X(cuMemPoolExportToShareableHandle,                                                            \
      (void *out, CUmemoryPool pool, int type, unsigned long long flags))                          \
    X(cuMemPoolExportPointer, (void *data, CUdeviceptr ptr))                                       \
    X(cuStreamSynchronize, (CUstream s))                                                           \
    X(cuStreamSynchronize_ptsz, (CUstream s))                                                      \
    X(cuEventSynchronize, (CUevent e))                                                             \
    X(cuStreamDestroy_v2, (CUstream s))                                                            \
    X(cuCtxSynchronize, (void))

/* Every CUDA entry point libvramcap wraps: exported under its real name
 * (for programs linked against libcuda) and handed out in place of the
 * real one by dlsym and cuGetProcAddress (for runtimes that look them
 * up). */
#define DRIVER_WRAPPED(X)                                                                          \
    DRIVER_HOOK_WRAPPED(X)                                                                         \
    DRIVER_MEM_WRAPPED(X)                                                                          \
    DRIVER_VMM_WRAPPED(X)                                                                          \
    DRIVER_VIEW_WRAPPED(X) DRIVER_PEER_WRAPPED(X) DRIVER_MEMPOOL_WRAPPED(X)

/* The NVML entry points libvramcap wraps (view.c). */
#define DRIVER_NVML_WRAPPED(X)                                                                     \
    X(nvmlDeviceGetMemoryInfo, (nvmlDevice_t d, nvmlMemory_v1_t * m))                              \
    X(nvmlDeviceGetMemoryInfo_v2, (nvmlDevice_t d, nvmlMemory_v2_t * m))

/* Entry points libvramcap calls but does not wrap. */
#define DRIVER_HELPERS(X)                                                                          \
    X(cuCtxGetDevice, (CUdevice * dev))                                                            \
    X(cuDeviceGetCount, (int *n))                                                                  \
    X(cuDeviceGetUuid_v2, (CUuuid * uuid, CUdevice dev))                                           \
    X(cuMemGetAddressRange_v2, (CUdeviceptr * base, size_t * size, CUdeviceptr p))                 \
    X(cuDevicePrimaryCtxRelease_v2, (CUdevice dev))                                                \
    X(cuCtxSetCurrent, (CUcontext ctx))                                                            \
    X(cuCtxGetCurrent, (CUcontext * ctx))                                                          \
    X(cuMemGetAllocationGranularity, (size_t * gran, const CUmemAllocationProp *prop, int option)) \
    X(cuStreamCreate, (CUstream * s, unsigned flags))                                              \
    X(cuEventCreate, (CUevent * e, unsigned flags))                                                \
    X(cuEventRecord, (CUevent e, CUstream s))                                                      \
    X(cuEventQuery, (CUevent e))                                                                   \
    X(cuEventDestroy_v2, (CUevent e))                                                              \
    X(cuStreamWaitEvent, (CUstream s, CUevent e, unsigned flags))                                  \
    X(cuStreamIsCapturing, (CUstream s, CUstreamCaptureStatus * status))                           \
    X(cuStreamGetDevice, (CUstream s, CUdevice * dev))                                             \
    X(cuThreadExchangeStreamCaptureMode, (CUstreamCaptureMode * mode))                             \
    X(cuDeviceGraphMemTrim, (CUdevice dev))                                                        \
    X(cuDeviceGetGraphMemAttribute, (CUdevice dev, int attr, void *value))                         \
    X(cuMemcpyDtoHAsync_v2, (void *dst, CUdeviceptr src, size_t n, CUstream s))                    \
    X(cuMemcpyHtoDAsync_v2, (CUdeviceptr dst, const void *src, size_t n, CUstream s))              \
    X(cuMemHostRegister_v2, (void *p, size_t n, unsigned flags))                                   \
    X(cuMemHostUnregister, (void *p))

#define DRIVER_DECLARE_CU(name, params)   extern CUresult(*real_##name) params;
#define DRIVER_DECLARE_NVML(name, params) extern nvmlReturn_t(*real_##name) params;
DRIVER_WRAPPED(DRIVER_DECLARE_CU)
DRIVER_HELPERS(DRIVER_DECLARE_CU)
DRIVER_NVML_WRAPPED(DRIVER_DECLARE_NVML)

/* A wrapper's declaration, for the header of the file that wraps: the
 * wrapper bears the entry point's own name. */
#define DRIVER_WRAPPER(name, params)      CUresult name params;
#define DRIVER_NVML_WRAPPER(name, params) nvmlReturn_t name params;

/* Looks up the real entry points once libcuda / libnvidia-ml is loaded. */
void driver_resolve_cuda(void);
void driver_resolve_nvml(void);

/* The real entry point, for wrappers called before libcuda was looked up
 * through libvramcap (a program linked against libcuda calls its exported
 * names). */
#define REAL(name) (real_##name ? real_##name : (driver_resolve_cuda(), real_##name))

/* The real dlsym, found past libvramcap (NULL if glibc has none). */
typedef void *(*driver_dlsym_fn)(void *, const char *);
driver_dlsym_fn driver_dlsym(void);

/* name looked up in handle with the real dlsym. */
void *driver_lookup(void *handle, const char *name);

#endif
