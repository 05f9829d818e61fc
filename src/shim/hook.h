/* hook: the doors between a program and the driver (the dynamic linker,
 * dlsym, cuGetProcAddress) and the table of entry points libvramcap wraps:
 * each file that wraps some lists them in its header (mem.h, vmm.h,
 * view.h, peer.h, mpool.h, share.h), and hook.c hands out the wrapper
 * for every one. */
#ifndef VRAM_SHIM_HOOK_H
#define VRAM_SHIM_HOOK_H

#include "gpu/cuda_api.h"
#include "gpu/nvml_api.h"
#include "shim/mem.h"
#include "shim/mpool.h"
#include "shim/peer.h"
#include "shim/share.h"
#include "shim/view.h"
#include "shim/vmm.h"

/* Entry points hook.c wraps itself: the lookups. */
#define HOOK_CUDA_HOOKS(X)                                                                         \
    X(cuGetProcAddress, (const char *sym, void **pfn, int ver, cuuint64_t flags))                  \
    X(cuGetProcAddress_v2, (const char *sym, void **pfn, int ver, cuuint64_t flags, int *status))

/* The driver's entry points libvramcap wraps: each is exported under its
 * real name (for programs linked against libcuda) and handed out in place
 * of the real one by dlsym and cuGetProcAddress (for runtimes that look
 * them up). */
#define SHIM_CUDA_HOOKS(X)                                                                         \
    HOOK_CUDA_HOOKS(X)                                                                             \
    MEM_CUDA_HOOKS(X)                                                                              \
    VMM_CUDA_HOOKS(X) VIEW_CUDA_HOOKS(X) PEER_CUDA_HOOKS(X) MPOOL_CUDA_HOOKS(X) SHARE_CUDA_HOOKS(X)

/* Entry points the shim calls but does not wrap. */
#define SHIM_CUDA_HELPERS(X)                                                                       \
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

/* The NVML entry points libvramcap wraps. */
#define SHIM_NVML_HOOKS(X) VIEW_NVML_HOOKS(X)

#define SHIM_DECLARE_CU(name, params)   extern CUresult(*real_##name) params;
#define SHIM_DECLARE_NVML(name, params) extern nvmlReturn_t(*real_##name) params;
SHIM_CUDA_HOOKS(SHIM_DECLARE_CU)
SHIM_CUDA_HELPERS(SHIM_DECLARE_CU)
SHIM_NVML_HOOKS(SHIM_DECLARE_NVML)

/* Resolves the real entry points once libcuda / libnvidia-ml are loaded. */
void hook_resolve_cuda(void);
void hook_resolve_nvml(void);

/* The real entry point, for wrappers called before libcuda was looked up
 * through us (a program linked against libcuda calls our exported names). */
#define REAL(name) (real_##name ? real_##name : (hook_resolve_cuda(), real_##name))

/* The real dlsym, looked up past libvramcap. */
void *hook_real_dlsym(void *handle, const char *name);

/* Our wrapper for a real entry point, or NULL when we do not wrap it. */
void *hook_wrapper_for(const void *real);

#endif
