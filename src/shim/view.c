/* view: what a capped process is told about its GPU, and what its context
 * costs. A process capped at 6 GiB sees a 6 GiB GPU: cuMemGetInfo,
 * cuDeviceTotalMem and NVML's memory queries all say total = cap and
 * free = cap - used (never more than the GPU really has free), so
 * frameworks that size themselves from free memory size themselves to the
 * slice. The context's own footprint counts against the cap: it is
 * measured once per GPU (NVML's figure for this process right after its
 * first context) and shared through the group with the other members. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gpu/nvproc.h"
#include "shim/ctl.h"
#include "shim/gate.h"
#include "shim/hook.h"
#include "shim/shim.h"
#include "shim/view.h"

static uint64_t used_now(void)
{
    struct group_shared *sh = shim.group.sh;
    return __atomic_load_n(&sh->used, __ATOMIC_RELAXED);
}

SHIM_EXPORT CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
    GATE_SCOPE();
    if (!REAL(cuMemGetInfo_v2))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real_cuMemGetInfo_v2(free_b, total);
    if (rc != CUDA_SUCCESS || !shim.capped || !free_b || !total)
        return rc;
    uint64_t cap = shim.group.sh->cap, used = used_now();
    uint64_t left = used < cap ? cap - used : 0;
    if (cap < *total)
        *total = cap;
    if (left < *free_b)
        *free_b = left;
    return rc;
}

SHIM_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    GATE_SCOPE();
    if (!REAL(cuDeviceTotalMem_v2))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real_cuDeviceTotalMem_v2(bytes, dev);
    if (rc == CUDA_SUCCESS && shim.capped && bytes && shim.group.sh->cap < *bytes)
        *bytes = shim.group.sh->cap;
    return rc;
}

static void uuid_string(const CUuuid *u, char *out, size_t len)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    snprintf(out, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

/* NVML's figure for this process on dev, right after its first context:
 * that is the context's footprint. 0 when NVML cannot say. */
static uint64_t measure_context(CUdevice dev)
{
    CUuuid u;
    char uuid[96];
    if (!real_cuDeviceGetUuid_v2 || real_cuDeviceGetUuid_v2(&u, dev) != CUDA_SUCCESS)
        return 0;
    uuid_string(&u, uuid, sizeof uuid);
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 0;
    nvmlReturn_t (*init)(void) = (nvmlReturn_t(*)(void))hook_real_dlsym(h, "nvmlInit_v2");
    nvmlReturn_t (*fini)(void) = (nvmlReturn_t(*)(void))hook_real_dlsym(h, "nvmlShutdown");
    nvmlReturn_t (*by_uuid)(const char *, nvmlDevice_t *) =
        (nvmlReturn_t(*)(const char *, nvmlDevice_t *))hook_real_dlsym(h,
                                                                       "nvmlDeviceGetHandleByUUID");
    nvml_proclist_fn procs =
        (nvml_proclist_fn)hook_real_dlsym(h, "nvmlDeviceGetComputeRunningProcesses_v3");
    uint64_t bytes = 0;
    nvmlDevice_t d;
    if (init && fini && by_uuid && procs && init() == NVML_SUCCESS) {
        unsigned char buf[64 * NVPROC_MAX_STRIDE];
        memset(buf, NVPROC_SENTINEL, sizeof buf);
        unsigned n = 64;
        if (by_uuid(uuid, &d) == NVML_SUCCESS && procs(d, &n, buf) == NVML_SUCCESS) {
            struct nvproc_entry e[64];
            size_t stride = nvproc_stride(buf, n, sizeof(nvmlProcessInfo_v2_t));
            unsigned k = nvproc_decode(buf, n < 64 ? n : 64, stride, 0, e, NULL);
            for (unsigned i = 0; i < k; i++)
                if (e[i].pid == (uint32_t)getpid() && e[i].used_known)
                    bytes = e[i].used;
        }
        fini();
    }
    dlclose(h);
    return bytes;
}

CUresult view_charge_context(CUdevice dev)
{
    if (!shim.capped || dev < 0 || dev >= SHIM_MAX_DEVICES)
        return CUDA_SUCCESS;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&shim.ctx_mu);
    if (shim.ctx_charged[dev] == 0) {
        struct group_shared *sh = shim.group.sh;
        uint64_t bytes = __atomic_load_n(&sh->ctx_bytes, __ATOMIC_ACQUIRE);
        if (bytes == 0) {
            bytes = measure_context(dev);
            if (bytes)
                __atomic_store_n(&sh->ctx_bytes, bytes, __ATOMIC_RELEASE);
        }
        if (bytes && group_reserve(&shim.group, bytes) < 0)
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        else
            shim.ctx_charged[dev] = bytes ? bytes : 1;
    }
    pthread_mutex_unlock(&shim.ctx_mu);
    return rc;
}

SHIM_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
    GATE_SCOPE();
    if (!REAL(cuDevicePrimaryCtxRetain))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real_cuDevicePrimaryCtxRetain(ctx, dev);
    if (rc == CUDA_SUCCESS && view_charge_context(dev) != CUDA_SUCCESS) {
        if (real_cuDevicePrimaryCtxRelease_v2)
            real_cuDevicePrimaryCtxRelease_v2(dev);
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (rc == CUDA_SUCCESS && dev >= 0 && dev < SHIM_MAX_DEVICES) {
        shim.primary_used[dev] = true;
        ctl_start();
    }
    return rc;
}

/* Contexts the application makes are remembered: a swap waits for them. */
static CUresult created(CUresult rc, CUcontext *ctx, CUdevice dev)
{
    if (rc == CUDA_SUCCESS && view_charge_context(dev) != CUDA_SUCCESS) {
        if (real_cuCtxDestroy_v2)
            real_cuCtxDestroy_v2(*ctx);
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (rc == CUDA_SUCCESS && shim.swap) {
        pthread_mutex_lock(&shim.ctx_mu);
        if (shim.nctx < SHIM_MAX_CONTEXTS) {
            shim.ctx[shim.nctx] = *ctx;
            shim.ctx_dev[shim.nctx++] = dev;
        }
        pthread_mutex_unlock(&shim.ctx_mu);
        ctl_start();
    }
    return rc;
}

SHIM_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    GATE_SCOPE();
    if (!REAL(cuCtxDestroy_v2))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real_cuCtxDestroy_v2(ctx);
    if (rc == CUDA_SUCCESS && shim.swap) {
        pthread_mutex_lock(&shim.ctx_mu);
        for (unsigned i = 0; i < shim.nctx; i++)
            if (shim.ctx[i] == ctx) {
                shim.ctx[i] = shim.ctx[--shim.nctx];
                shim.ctx_dev[i] = shim.ctx_dev[shim.nctx];
                break;
            }
        pthread_mutex_unlock(&shim.ctx_mu);
    }
    return rc;
}

SHIM_EXPORT CUresult cuCtxCreate_v2(CUcontext *ctx, unsigned flags, CUdevice dev)
{
    GATE_SCOPE();
    if (!REAL(cuCtxCreate_v2))
        return CUDA_ERROR_NOT_INITIALIZED;
    return created(real_cuCtxCreate_v2(ctx, flags, dev), ctx, dev);
}

SHIM_EXPORT CUresult cuCtxCreate_v3(CUcontext *ctx, CUexecAffinityParamPtr params, int n,
                                    unsigned flags, CUdevice dev)
{
    GATE_SCOPE();
    if (!REAL(cuCtxCreate_v3))
        return CUDA_ERROR_NOT_INITIALIZED;
    return created(real_cuCtxCreate_v3(ctx, params, n, flags, dev), ctx, dev);
}

SHIM_EXPORT CUresult cuCtxCreate_v4(CUcontext *ctx, void *params, unsigned flags, CUdevice dev)
{
    GATE_SCOPE();
    if (!REAL(cuCtxCreate_v4))
        return CUDA_ERROR_NOT_INITIALIZED;
    return created(real_cuCtxCreate_v4(ctx, params, flags, dev), ctx, dev);
}

/* NVML asked from inside the capped process sees the slice too, on the GPU
 * the group was made for. */
static bool is_capped_gpu(nvmlDevice_t d)
{
    static nvmlReturn_t (*get_uuid)(nvmlDevice_t, char *, unsigned);
    if (!shim.capped || !shim.group.sh->gpu_uuid[0])
        return false;
    if (!get_uuid) {
        void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_NOLOAD);
        if (!h)
            return false;
        get_uuid = (nvmlReturn_t(*)(nvmlDevice_t, char *, unsigned))hook_real_dlsym(
            h, "nvmlDeviceGetUUID");
        dlclose(h);
        if (!get_uuid)
            return false;
    }
    char uuid[96];
    return get_uuid(d, uuid, sizeof uuid) == NVML_SUCCESS &&
           strcmp(uuid, shim.group.sh->gpu_uuid) == 0;
}

SHIM_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_v1_t *m)
{
    if (!real_nvmlDeviceGetMemoryInfo)
        hook_resolve_nvml();
    if (!real_nvmlDeviceGetMemoryInfo)
        return NVML_ERROR_UNINITIALIZED;
    nvmlReturn_t rc = real_nvmlDeviceGetMemoryInfo(d, m);
    /* a group without a slice (vram run with no --vram) changes nothing */
    if (rc == NVML_SUCCESS && m && shim.capped && shim.group.sh->cap < m->total &&
        is_capped_gpu(d)) {
        uint64_t cap = shim.group.sh->cap, used = used_now();
        m->total = cap;
        m->used = used < cap ? used : cap;
        m->free = cap - m->used;
    }
    return rc;
}

SHIM_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
    if (!real_nvmlDeviceGetMemoryInfo_v2)
        hook_resolve_nvml();
    if (!real_nvmlDeviceGetMemoryInfo_v2)
        return NVML_ERROR_UNINITIALIZED;
    nvmlReturn_t rc = real_nvmlDeviceGetMemoryInfo_v2(d, m);
    if (rc == NVML_SUCCESS && m && shim.capped && shim.group.sh->cap < m->total &&
        is_capped_gpu(d)) {
        uint64_t cap = shim.group.sh->cap, used = used_now();
        m->total = cap;
        m->reserved = 0;
        m->used = used < cap ? used : cap;
        m->free = cap - m->used;
    }
    return rc;
}
