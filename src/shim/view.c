/* view: what a capped process is told about its GPUs, and what its context
 * costs. A process capped at 6 GiB sees a 6 GiB GPU: cuMemGetInfo,
 * cuDeviceTotalMem and NVML's memory queries all say total = cap and
 * free = cap - used (never more than the GPU really has free), so
 * frameworks that size themselves from free memory size themselves to the
 * slice. Each GPU answers with its own slice. The context's own footprint
 * counts against its GPU's cap, charged before the context is made: it is
 * measured once per group, around the first member's first context
 * (shim/ctxcost.c: what the GPU's free memory dropped by, and NVML's figure
 * for the process where NVML names it, which it does not in a container
 * with a PID namespace of its own) and shared through the group with the
 * other members. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shim/ctl.h"
#include "shim/ctxcost.h"
#include "shim/driver.h"
#include "shim/gate.h"
#include "shim/shim.h"
#include "shim/view.h"

static uint64_t used_of(const struct group *g)
{
    return __atomic_load_n(&g->sh->used, __ATOMIC_RELAXED);
}

/* Each device answers with its own slice: the current context's device
 * here, the one asked about below. A device the process has no slice on
 * has nothing free for it. */
SHIM_EXPORT CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
    GATE_SCOPE();
    if (!REAL(cuMemGetInfo_v2))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real_cuMemGetInfo_v2(free_b, total);
    if (rc != CUDA_SUCCESS || !shim.capped || !free_b || !total)
        return rc;
    struct group *g = budget_of(&shim.budget, shim_device_now());
    if (!g) {
        *free_b = 0;
        return rc;
    }
    uint64_t cap = g->sh->cap, used = used_of(g);
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
    struct group *g;
    if (rc == CUDA_SUCCESS && shim.capped && bytes && (g = budget_of(&shim.budget, dev)) &&
        g->sh->cap < *bytes)
        *bytes = g->sh->cap;
    return rc;
}

/* How a context is made and unmade, for charged_make. */
struct maker {
    CUresult (*make)(struct maker *m);
    CUcontext *ctx;
    CUdevice dev;
    unsigned flags;
    CUexecAffinityParamPtr params;
    int n;
    void *params4;
    int version; /* 0: the primary context, 2-4: cuCtxCreate_vN */
};

static CUresult unmake(struct maker *m)
{
    if (m->version == 0)
        return real_cuDevicePrimaryCtxRelease_v2 ? real_cuDevicePrimaryCtxRelease_v2(m->dev)
                                                 : CUDA_SUCCESS;
    return real_cuCtxDestroy_v2 ? real_cuCtxDestroy_v2(*m->ctx) : CUDA_SUCCESS;
}

static pthread_mutex_t charge_mu = PTHREAD_MUTEX_INITIALIZER;

/* a fork may happen while another thread holds it */
static void charge_mu_reset(void)
{
    pthread_mutex_init(&charge_mu, NULL);
}

__attribute__((constructor)) static void charge_mu_setup(void)
{
    pthread_atfork(NULL, NULL, charge_mu_reset);
}

/* The group's first context, whose footprint no one knows yet: made, then
 * charged at once with the drop in the GPU's free memory, which the other
 * members waiting for it (group_ctx_reserve) are told right away; then
 * NVML's own figure for the process, slower to come, raises the charge if
 * it is larger. A group without room even for its first context refuses
 * it, and nothing stays charged. */
static CUresult measured_make(struct maker *m, struct group *g)
{
    CUdevice dev = m->dev;
    struct ctxcost cc;
    ctxcost_begin(&cc, dev, g);
    CUresult rc = m->make(m);
    if (rc != CUDA_SUCCESS) {
        group_ctx_abandon(g);
        ctxcost_end(&cc);
        return rc;
    }
    uint64_t quick = ctxcost_quick(&cc, g), named = 0;
    if (quick && group_reserve(g, quick) < 0)
        goto refused;
    if (quick) /* the members waiting need not wait for NVML's list */
        group_ctx_measured(g, quick);
    bool is_named = ctxcost_named(&cc, &named);
    if (named > quick && group_reserve(g, named - quick) < 0) {
        group_release(g, quick);
        goto refused;
    }
    uint64_t bytes = named > quick ? named : quick;
    if (bytes || is_named)
        group_ctx_measured(g, bytes);
    else /* nothing could be measured: the next member tries */
        group_ctx_abandon(g);
    shim.ctx_charged[dev] = bytes ? bytes : 1;
    ctxcost_end(&cc);
    return CUDA_SUCCESS;
refused:
    unmake(m);
    group_ctx_abandon(g);
    ctxcost_end(&cc);
    return CUDA_ERROR_OUT_OF_MEMORY;
}

/* The first context of this process on a GPU is charged, to that GPU's
 * group, before the driver makes it: a process joining a full group is
 * refused without the driver ever holding its context, and the group's sum
 * never passes the cap while processes join. Only the group's very first
 * context, whose footprint no one has measured yet, is made first and
 * charged after, and no other member makes one meanwhile
 * (group_ctx_reserve). A GPU the process has no slice on gets no context. */
static CUresult charged_make(struct maker *m)
{
    CUdevice dev = m->dev;
    if (!shim.capped || dev < 0 || dev >= SHIM_MAX_DEVICES)
        return m->make(m);
    struct group *g = budget_of(&shim.budget, dev);
    if (!g) {
        budget_refused(&shim.budget, dev);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&charge_mu);
    CUresult rc;
    uint64_t bytes = 0;
    int how = shim.ctx_charged[dev] ? 2 : group_ctx_reserve(g, &bytes);
    if (how == 2) { /* charged already: one footprint per process and GPU */
        rc = m->make(m);
    } else if (how < 0) {
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    } else if (how == GROUP_CTX_RESERVED) {
        rc = m->make(m);
        if (rc == CUDA_SUCCESS)
            shim.ctx_charged[dev] = bytes ? bytes : 1;
        else
            group_release(g, bytes);
    } else {
        rc = measured_make(m, g);
    }
    pthread_mutex_unlock(&charge_mu);
    return rc;
}

static CUresult make_primary(struct maker *m)
{
    return real_cuDevicePrimaryCtxRetain(m->ctx, m->dev);
}

SHIM_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
    GATE_SCOPE();
    if (!REAL(cuDevicePrimaryCtxRetain))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = charged_make(&(struct maker){.make = make_primary, .ctx = ctx, .dev = dev});
    if (rc == CUDA_SUCCESS && dev >= 0 && dev < SHIM_MAX_DEVICES) {
        shim.primary_used[dev] = true;
        ctl_start();
    }
    return rc;
}

/* Contexts the application makes are remembered: a swap waits for them. */
static CUresult created(CUresult rc, CUcontext *ctx, CUdevice dev)
{
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

static CUresult make_created(struct maker *m)
{
    switch (m->version) {
    case 2:
        return real_cuCtxCreate_v2(m->ctx, m->flags, m->dev);
    case 3:
        return real_cuCtxCreate_v3(m->ctx, m->params, m->n, m->flags, m->dev);
    default:
        return real_cuCtxCreate_v4(m->ctx, m->params4, m->flags, m->dev);
    }
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
    struct maker m = {.make = make_created, .ctx = ctx, .dev = dev, .flags = flags, .version = 2};
    return created(charged_make(&m), ctx, dev);
}

SHIM_EXPORT CUresult cuCtxCreate_v3(CUcontext *ctx, CUexecAffinityParamPtr params, int n,
                                    unsigned flags, CUdevice dev)
{
    GATE_SCOPE();
    if (!REAL(cuCtxCreate_v3))
        return CUDA_ERROR_NOT_INITIALIZED;
    struct maker m = {.make = make_created,
                      .ctx = ctx,
                      .dev = dev,
                      .flags = flags,
                      .params = params,
                      .n = n,
                      .version = 3};
    return created(charged_make(&m), ctx, dev);
}

SHIM_EXPORT CUresult cuCtxCreate_v4(CUcontext *ctx, void *params, unsigned flags, CUdevice dev)
{
    GATE_SCOPE();
    if (!REAL(cuCtxCreate_v4))
        return CUDA_ERROR_NOT_INITIALIZED;
    struct maker m = {.make = make_created,
                      .ctx = ctx,
                      .dev = dev,
                      .flags = flags,
                      .params4 = params,
                      .version = 4};
    return created(charged_make(&m), ctx, dev);
}

/* NVML asked from inside the capped process sees the slice too, on each
 * GPU it has one on (found by UUID: NVML counts every GPU of the machine,
 * not the ones CUDA_VISIBLE_DEVICES shows). */
static struct group *capped_gpu(nvmlDevice_t d)
{
    static nvmlReturn_t (*get_uuid)(nvmlDevice_t, char *, unsigned);
    if (!shim.capped)
        return NULL;
    if (!get_uuid) {
        void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_NOLOAD);
        if (!h)
            return NULL;
        get_uuid =
            (nvmlReturn_t(*)(nvmlDevice_t, char *, unsigned))driver_lookup(h, "nvmlDeviceGetUUID");
        dlclose(h);
        if (!get_uuid)
            return NULL;
    }
    char uuid[96];
    if (get_uuid(d, uuid, sizeof uuid) != NVML_SUCCESS)
        return NULL;
    return budget_by_uuid(&shim.budget, uuid);
}

SHIM_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_v1_t *m)
{
    if (!real_nvmlDeviceGetMemoryInfo)
        driver_resolve_nvml();
    if (!real_nvmlDeviceGetMemoryInfo)
        return NVML_ERROR_UNINITIALIZED;
    nvmlReturn_t rc = real_nvmlDeviceGetMemoryInfo(d, m);
    struct group *g;
    /* a group without a slice (vram run with no --vram) changes nothing */
    if (rc == NVML_SUCCESS && m && (g = capped_gpu(d)) && g->sh->cap < m->total) {
        uint64_t cap = g->sh->cap, used = used_of(g);
        m->total = cap;
        m->used = used < cap ? used : cap;
        m->free = cap - m->used;
    }
    return rc;
}

SHIM_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
    if (!real_nvmlDeviceGetMemoryInfo_v2)
        driver_resolve_nvml();
    if (!real_nvmlDeviceGetMemoryInfo_v2)
        return NVML_ERROR_UNINITIALIZED;
    nvmlReturn_t rc = real_nvmlDeviceGetMemoryInfo_v2(d, m);
    struct group *g;
    if (rc == NVML_SUCCESS && m && (g = capped_gpu(d)) && g->sh->cap < m->total) {
        uint64_t cap = g->sh->cap, used = used_of(g);
        m->total = cap;
        m->reserved = 0;
        m->used = used < cap ? used : cap;
        m->free = cap - m->used;
    }
    return rc;
}
