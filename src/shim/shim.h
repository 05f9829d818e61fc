/* shim: what the parts of libvramcap share: the driver entry points it
 * wraps (and the real ones behind them), the process's budget, its
 * allocation table and, with fast swap on, its table of swappable memory. */
#ifndef VRAM_SHIM_SHIM_H
#define VRAM_SHIM_SHIM_H

#include <stdbool.h>
#include <stdint.h>

#include "atab.h"
#include "vtab.h"
#include "gpu/cuda_api.h"
#include "gpu/nvml_api.h"
#include "group.h"

#define SHIM_EXPORT      __attribute__((visibility("default")))
#define SHIM_MAX_DEVICES 64

typedef void *CUexecAffinityParamPtr;

/* The driver's memory entry points: each is exported under its real name
 * (for programs linked against libcuda) and handed out in place of the real
 * one by dlsym and cuGetProcAddress (for runtimes that look them up). */
#define SHIM_CUDA_HOOKS(X)                                                                         \
    X(cuGetProcAddress, (const char *sym, void **pfn, int ver, cuuint64_t flags))                  \
    X(cuGetProcAddress_v2, (const char *sym, void **pfn, int ver, cuuint64_t flags, int *status))  \
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
      (void *out, CUmemGenericAllocationHandle h, int type, unsigned long long flags))             \
    X(cuArrayCreate_v2, (CUarray * arr, const CUDA_ARRAY_DESCRIPTOR *desc))                        \
    X(cuArray3DCreate_v2, (CUarray * arr, const CUDA_ARRAY3D_DESCRIPTOR *desc))                    \
    X(cuMipmappedArrayCreate,                                                                      \
      (CUmipmappedArray * arr, const CUDA_ARRAY3D_DESCRIPTOR *desc, unsigned levels))              \
    X(cuArrayDestroy, (CUarray arr))                                                               \
    X(cuMipmappedArrayDestroy, (CUmipmappedArray arr))                                             \
    X(cuIpcOpenMemHandle_v2, (CUdeviceptr * dptr, CUipcMemHandle h, unsigned flags))               \
    X(cuIpcCloseMemHandle, (CUdeviceptr dptr))                                                     \
    X(cuMemGetInfo_v2, (size_t * free_b, size_t * total))                                          \
    X(cuDeviceTotalMem_v2, (size_t * bytes, CUdevice dev))                                         \
    X(cuDevicePrimaryCtxRetain, (CUcontext * ctx, CUdevice dev))                                   \
    X(cuCtxDestroy_v2, (CUcontext ctx))                                                            \
    X(cuCtxCreate_v2, (CUcontext * ctx, unsigned flags, CUdevice dev))                             \
    X(cuCtxCreate_v3,                                                                              \
      (CUcontext * ctx, CUexecAffinityParamPtr params, int n, unsigned flags, CUdevice dev))       \
    X(cuCtxCreate_v4, (CUcontext * ctx, void *params, unsigned flags, CUdevice dev))

/* Entry points the shim calls but does not wrap. */
#define SHIM_CUDA_HELPERS(X)                                                                       \
    X(cuCtxGetDevice, (CUdevice * dev))                                                            \
    X(cuDeviceGetUuid_v2, (CUuuid * uuid, CUdevice dev))                                           \
    X(cuMemGetAddressRange_v2, (CUdeviceptr * base, size_t * size, CUdeviceptr p))                 \
    X(cuDevicePrimaryCtxRelease_v2, (CUdevice dev))                                                \
    X(cuCtxSetCurrent, (CUcontext ctx))                                                            \
    X(cuCtxSynchronize, (void))                                                                    \
    X(cuMemGetAllocationGranularity, (size_t * gran, const CUmemAllocationProp *prop, int option)) \
    X(cuStreamCreate, (CUstream * s, unsigned flags))                                              \
    X(cuStreamSynchronize, (CUstream s))                                                           \
    X(cuEventCreate, (CUevent * e, unsigned flags))                                                \
    X(cuEventRecord, (CUevent e, CUstream s))                                                      \
    X(cuEventSynchronize, (CUevent e))                                                             \
    X(cuMemcpyDtoHAsync_v2, (void *dst, CUdeviceptr src, size_t n, CUstream s))                    \
    X(cuMemcpyHtoDAsync_v2, (CUdeviceptr dst, const void *src, size_t n, CUstream s))              \
    X(cuMemHostRegister_v2, (void *p, size_t n, unsigned flags))                                   \
    X(cuMemHostUnregister, (void *p))

#define SHIM_NVML_HOOKS(X)                                                                         \
    X(nvmlDeviceGetMemoryInfo, (nvmlDevice_t d, nvmlMemory_v1_t * m))                              \
    X(nvmlDeviceGetMemoryInfo_v2, (nvmlDevice_t d, nvmlMemory_v2_t * m))

#define SHIM_DECLARE_CU(name, params)   extern CUresult(*real_##name) params;
#define SHIM_DECLARE_NVML(name, params) extern nvmlReturn_t(*real_##name) params;
SHIM_CUDA_HOOKS(SHIM_DECLARE_CU)
SHIM_CUDA_HELPERS(SHIM_DECLARE_CU)
SHIM_NVML_HOOKS(SHIM_DECLARE_NVML)

#define SHIM_MAX_CONTEXTS 64

struct shim {
    bool capped; /* a budget is in force (VRAM_CAP_GROUP or VRAM_CAP) */
    bool swap;   /* fast swap is on (VRAM_SWAP=1) */
    struct group group;
    struct atab atab;
    struct vtab vtab;
    pthread_mutex_t ctx_mu;
    uint64_t ctx_charged[SHIM_MAX_DEVICES];
    CUcontext ctx[SHIM_MAX_CONTEXTS]; /* contexts made with cuCtxCreate */
    CUdevice ctx_dev[SHIM_MAX_CONTEXTS];
    unsigned nctx;
    bool primary_used[SHIM_MAX_DEVICES];
};

extern struct shim shim;

#define SHIM_PAGE (2ULL << 20) /* the driver's allocation granularity */

static inline uint64_t shim_pages(uint64_t n)
{
    return n > UINT64_MAX - SHIM_PAGE ? UINT64_MAX : (n + SHIM_PAGE - 1) & ~(SHIM_PAGE - 1);
}

/* Takes bytes from the budget (always succeeds without a cap). */
static inline bool shim_budget_take(uint64_t bytes)
{
    return !shim.capped || group_reserve(&shim.group, bytes) == 0;
}

static inline void shim_budget_give(uint64_t bytes)
{
    if (shim.capped && bytes)
        group_release(&shim.group, bytes);
}

/* The calling thread's device, -1 without a context. */
int shim_device_now(void);

/* A free gives back what its allocation charged, under whichever of kinds
 * it was recorded (mem.c). */
void shim_give_back(uint64_t key, const enum atab_kind *kinds, size_t nkinds);

/* Resolves the real entry points once libcuda / libnvidia-ml are loaded. */
void shim_resolve_cuda(void);
void shim_resolve_nvml(void);

/* The real entry point, for wrappers called before libcuda was looked up
 * through us (a program linked against libcuda calls our exported names). */
#define REAL(name) (real_##name ? real_##name : (shim_resolve_cuda(), real_##name))

/* The real dlsym, looked up past libvramcap. */
void *shim_real_dlsym(void *handle, const char *name);

/* Our wrapper for a real entry point, or NULL when we do not wrap it. */
void *shim_wrapper_for(const void *real);

/* Charges this process's context footprint on dev once (view.c). */
CUresult shim_charge_context(CUdevice dev);

/* Fast swap (swap.c): a cuMemAlloc / cuMemFree made of VMM calls. Where
 * the driver has no VMM, a plain allocation, and *plain says so. */
CUresult swap_alloc(CUdeviceptr *dptr, size_t size, bool *plain);
CUresult swap_free(CUdeviceptr dptr);

/* Starts the control socket once the process has a context (ctl.c). */
void ctl_start(void);

#endif
