/* cuda: the simulated libcuda.so.1.
 *
 * Device memory is host memory: cuMemAlloc returns a malloc'd address, and
 * copies are memcpy, so tests can check every byte. Each process's footprint
 * (its contexts and allocations) is written to the shared ledger, where the
 * simulated NVML of any other process reads it. CUDA_VISIBLE_DEVICES is
 * honoured as the real driver does (indexes or UUIDs). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "sim/cuda_internal.h"
#include "gpu/uuid.h"

#define EXPORT SIM_EXPORT

struct CUctx_st {
    CUdevice dev;
    int primary;
    int refs;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int inited;
static int visible[SIM_MAX_GPUS]; /* CUdevice -> machine GPU index */
static int nvisible;
static struct CUctx_st primary[SIM_MAX_GPUS];
static int contexts_on[SIM_MAX_GPUS]; /* live contexts per CUdevice */
static __thread CUcontext current;

static unsigned ptype(void)
{
    /* a test program can play a graphics client (an OpenGL app) */
    const char *g = getenv("VRAM_SIM_GRAPHICS");
    return g && *g == '1' ? SIM_PT_GRAPHICS : SIM_PT_COMPUTE;
}

static void parse_visible(struct sim *s)
{
    const char *env = getenv("CUDA_VISIBLE_DEVICES");
    nvisible = 0;
    if (!env) {
        for (unsigned i = 0; i < s->machine.ngpus; i++)
            visible[nvisible++] = (int)i;
        return;
    }
    /* the driver stops at the first entry it cannot resolve */
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", env);
    for (char *tok = strtok(buf, ","); tok && nvisible < SIM_MAX_GPUS; tok = strtok(NULL, ",")) {
        while (*tok == ' ')
            tok++;
        int found = -1;
        if (!strncmp(tok, "GPU-", 4)) {
            for (unsigned i = 0; i < s->machine.ngpus; i++)
                if (!strncmp(s->machine.gpus[i].uuid, tok, strlen(tok)))
                    found = (int)i;
        } else {
            char *end;
            long v = strtol(tok, &end, 10);
            if (end != tok && *end == '\0' && v >= 0 && v < (long)s->machine.ngpus)
                found = (int)v;
        }
        if (found < 0)
            break;
        visible[nvisible++] = found;
    }
}

static struct sim *ready(void)
{
    return inited ? sim_get() : NULL;
}

struct sim *simcu_ready(void)
{
    return ready();
}

CUdevice simcu_device(void)
{
    return current ? current->dev : -1;
}

CUcontext simcu_current(void)
{
    return current;
}

CUdevice simcu_ctx_device(CUcontext ctx)
{
    return !ctx || (ctx->primary && ctx->refs == 0) ? -1 : ctx->dev;
}

int simcu_gpu(CUdevice dev)
{
    return dev >= 0 && dev < nvisible ? visible[dev] : -1;
}

void simcu_gate(void)
{
    struct sim *s = ready();
    for (;;) {
        if (!s)
            return;
        sim_state_lock(&s->state);
        uint32_t st = sim_state_ckpt_self(&s->state);
        sim_state_unlock(&s->state);
        if (st == CU_PROCESS_STATE_RUNNING)
            return;
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

void simcu_busy(void)
{
    struct sim *s = ready();
    int gi = simcu_gpu(simcu_device());
    if (!s || gi < 0)
        return;
    sim_state_lock(&s->state);
    sim_state_busy(&s->state, (unsigned)gi);
    sim_state_unlock(&s->state);
}

void simcu_link(const struct timespec *t0, size_t n)
{
    struct sim *s = ready();
    int gi = simcu_gpu(simcu_device());
    if (!s || gi < 0 || !s->machine.gpus[gi].link_mb_s)
        return;
    double want = (double)n / ((double)s->machine.gpus[gi].link_mb_s * 1e6);
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    double took = (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
    if (took < want) {
        double left = want - took;
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

CUresult simcu_charge(CUdevice dev, int64_t delta)
{
    simcu_gate();
    struct sim *s = ready();
    int gi = simcu_gpu(dev);
    if (!s || gi < 0)
        return CUDA_ERROR_INVALID_DEVICE;
    CUresult rc = CUDA_SUCCESS;
    sim_state_lock(&s->state);
    unsigned at = sim_state_actual(&s->state, (unsigned)gi);
    if (delta > 0 && !sim_fits_locked(s, at, (uint64_t)delta))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else if (sim_state_charge(&s->state, (unsigned)gi, ptype(), delta) < 0)
        rc = CUDA_ERROR_UNKNOWN;
    sim_state_unlock(&s->state);
    return rc;
}

EXPORT CUresult cuInit(unsigned flags)
{
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    struct sim *s = sim_get();
    if (!s)
        return CUDA_ERROR_NO_DEVICE;
    pthread_mutex_lock(&mu);
    if (!inited)
        parse_visible(s);
    inited = 1;
    pthread_mutex_unlock(&mu);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
    struct sim *s = sim_get();
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    *v = s ? s->machine.cuda_version : 0;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *n)
{
    if (!ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!n)
        return CUDA_ERROR_INVALID_VALUE;
    *n = nvisible;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (!ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    if (ordinal < 0 || ordinal >= nvisible)
        return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return CUDA_SUCCESS;
}

#define GPU_OF(dev)                                                                                \
    struct sim *s = ready();                                                                       \
    if (!s)                                                                                        \
        return CUDA_ERROR_NOT_INITIALIZED;                                                         \
    if ((dev) < 0 || (dev) >= nvisible)                                                            \
        return CUDA_ERROR_INVALID_DEVICE;                                                          \
    unsigned gi = (unsigned)visible[(dev)];                                                        \
    const struct sim_gpu_def *g = &s->machine.gpus[gi];                                            \
    (void)g;

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    GPU_OF(dev);
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "%s", g->name);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    GPU_OF(dev);
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    *bytes = g->memory;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    GPU_OF(dev);
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    memset(uuid, 0, sizeof *uuid);
    gpu_uuid_parse(g->uuid, (unsigned char *)uuid->bytes);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    return cuDeviceGetUuid_v2(uuid, dev);
}

EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice dev)
{
    GPU_OF(dev);
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned dom = 0, bus = 0, devn = 0;
    sscanf(g->pci_bus_id, "%x:%x:%x", &dom, &bus, &devn);
    switch (attr) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *v = g->cc_major;
        break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        *v = g->cc_minor;
        break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        *v = 132;
        break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
        *v = (int)bus;
        break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
        *v = (int)devn;
        break;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
        *v = (int)dom;
        break;
    default:
        *v = 0;
    }
    return CUDA_SUCCESS;
}

/* The first context on a device costs its footprint, as a real one does. */
static CUresult context_up(struct sim *s, CUdevice dev)
{
    CUresult rc = CUDA_SUCCESS;
    if (contexts_on[dev] == 0)
        rc = simcu_charge(dev, (int64_t)s->machine.gpus[visible[dev]].context);
    if (rc == CUDA_SUCCESS)
        contexts_on[dev]++;
    return rc;
}

static void context_down(struct sim *s, CUdevice dev)
{
    if (contexts_on[dev] > 0 && --contexts_on[dev] == 0)
        simcu_charge(dev, -(int64_t)s->machine.gpus[visible[dev]].context);
}

EXPORT CUresult cuCtxCreate_v2(CUcontext *ctx, unsigned flags, CUdevice dev)
{
    (void)flags;
    GPU_OF(dev);
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *c = calloc(1, sizeof *c);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&mu);
    CUresult rc = context_up(s, dev);
    pthread_mutex_unlock(&mu);
    if (rc != CUDA_SUCCESS) {
        free(c);
        return rc;
    }
    c->dev = dev;
    c->refs = 1;
    *ctx = current = c;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    struct sim *s = ready();
    if (!s)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!ctx || ctx->primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&mu);
    context_down(s, ctx->dev);
    pthread_mutex_unlock(&mu);
    simcu_peer_forget(ctx);
    if (current == ctx)
        current = NULL;
    free(ctx);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
    GPU_OF(dev);
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mu);
    CUresult rc = CUDA_SUCCESS;
    if (primary[dev].refs == 0)
        rc = context_up(s, dev);
    if (rc == CUDA_SUCCESS) {
        primary[dev].dev = dev;
        primary[dev].primary = 1;
        primary[dev].refs++;
        *ctx = &primary[dev];
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    GPU_OF(dev);
    pthread_mutex_lock(&mu);
    CUresult rc = CUDA_SUCCESS;
    int gone = 0;
    if (primary[dev].refs == 0)
        rc = CUDA_ERROR_INVALID_CONTEXT;
    else if ((gone = --primary[dev].refs == 0))
        context_down(s, dev);
    pthread_mutex_unlock(&mu);
    if (gone)
        simcu_peer_forget(&primary[dev]);
    return rc;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    if (!ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    current = ctx;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    if (!ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    *ctx = current;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetDevice(CUdevice *dev)
{
    if (!ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    if (!current)
        return CUDA_ERROR_INVALID_CONTEXT;
    *dev = current->dev;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSynchronize(void)
{
    if (!ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!current)
        return CUDA_ERROR_INVALID_CONTEXT;
    simcu_pools_settle(); /* what pools hold past their release threshold */
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGetErrorName(CUresult e, const char **s)
{
    static const struct {
        CUresult e;
        const char *name;
    } names[] = {
        {CUDA_SUCCESS, "CUDA_SUCCESS"},
        {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"},
        {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"},
        {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED"},
        {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE"},
        {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE"},
        {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT"},
        {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE"},
        {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE"},
        {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND"},
        {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS"},
        {CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"},
        {CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"},
        {CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED"},
        {CUDA_ERROR_TOO_MANY_PEERS, "CUDA_ERROR_TOO_MANY_PEERS"},
        {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED"},
        {CUDA_ERROR_TIMEOUT, "CUDA_ERROR_TIMEOUT"},
        {CUDA_ERROR_ALREADY_MAPPED, "CUDA_ERROR_ALREADY_MAPPED"},
        {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY"},
        {CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED"},
        {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"},
        {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"},
        {CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED"},
        {CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT"},
        {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN"},
    };
    if (!s)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].e == e) {
            *s = names[i].name;
            return CUDA_SUCCESS;
        }
    *s = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorString(CUresult e, const char **s)
{
    return cuGetErrorName(e, s);
}

/* cuGetProcAddress: CUDA 12+ runtimes find every entry point through it,
 * by base name ("cuMemAlloc") and the CUDA version they were built for. */
/* in cuda_mem.c and cuda_vmm.c */
CUresult cuMemGetInfo_v2(size_t *, size_t *);
CUresult cuMemAlloc_v2(CUdeviceptr *, size_t);
CUresult cuMemFree_v2(CUdeviceptr);
CUresult cuMemcpyHtoD_v2(CUdeviceptr, const void *, size_t);
CUresult cuMemcpyDtoH_v2(void *, CUdeviceptr, size_t);
CUresult cuMemcpyDtoD_v2(CUdeviceptr, CUdeviceptr, size_t);
CUresult cuMemsetD8_v2(CUdeviceptr, unsigned char, size_t);
CUresult cuMemAllocPitch_v2(CUdeviceptr *, size_t *, size_t, size_t, unsigned);
CUresult cuMemAllocManaged(CUdeviceptr *, size_t, unsigned);
CUresult cuMemAllocAsync(CUdeviceptr *, size_t, CUstream);
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
CUresult cuMemFreeAsync(CUdeviceptr, CUstream);
CUresult cuMemGetAddressRange_v2(CUdeviceptr *, size_t *, CUdeviceptr);
CUresult cuMemCreate(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                     unsigned long long);
CUresult cuMemRelease(CUmemGenericAllocationHandle);
CUresult cuMemAddressReserve(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
CUresult cuMemAddressFree(CUdeviceptr, size_t);
CUresult cuMemMap(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
CUresult cuMemUnmap(CUdeviceptr, size_t);
CUresult cuMemSetAccess(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
CUresult cuMemGetAllocationGranularity(size_t *, const CUmemAllocationProp *, int);
CUresult cuArrayCreate_v2(CUarray *, const CUDA_ARRAY_DESCRIPTOR *);
CUresult cuArray3DCreate_v2(CUarray *, const CUDA_ARRAY3D_DESCRIPTOR *);
CUresult cuArrayDestroy(CUarray);
/* in cuda_stream.c */
CUresult cuStreamCreate(CUstream *, unsigned);
CUresult cuStreamDestroy_v2(CUstream);
CUresult cuStreamSynchronize(CUstream);
CUresult cuEventCreate(CUevent *, unsigned);
CUresult cuEventRecord(CUevent, CUstream);
CUresult cuEventSynchronize(CUevent);
CUresult cuEventDestroy_v2(CUevent);
CUresult cuMemcpyDtoHAsync_v2(void *, CUdeviceptr, size_t, CUstream);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr, const void *, size_t, CUstream);
CUresult cuMemHostRegister_v2(void *, size_t, unsigned);
CUresult cuMemHostUnregister(void *);
CUresult cuMemExportToShareableHandle(void *, CUmemGenericAllocationHandle, int,
                                      unsigned long long);
CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *, void *, int);
CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *,
                                                CUmemGenericAllocationHandle);
CUresult cuStreamWaitEvent(CUstream, CUevent, unsigned);
CUresult cuEventQuery(CUevent);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr, CUdeviceptr, size_t, CUstream);
CUresult cuMemsetD8Async(CUdeviceptr, unsigned char, size_t, CUstream);
CUresult cuMemsetD32Async(CUdeviceptr, unsigned, size_t, CUstream);
/* in cuda_pool.c */
CUresult cuMemPoolCreate(CUmemoryPool *, const CUmemPoolProps *);
CUresult cuMemPoolDestroy(CUmemoryPool);
CUresult cuMemPoolTrimTo(CUmemoryPool, size_t);
CUresult cuMemPoolSetAttribute(CUmemoryPool, int, void *);
CUresult cuMemPoolGetAttribute(CUmemoryPool, int, void *);
CUresult cuMemPoolSetAccess(CUmemoryPool, const CUmemAccessDesc *, size_t);
CUresult cuMemPoolGetAccess(int *, CUmemoryPool, CUmemLocation *);
CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *, CUdevice);
CUresult cuDeviceGetMemPool(CUmemoryPool *, CUdevice);
CUresult cuDeviceSetMemPool(CUdevice, CUmemoryPool);
/* in cuda_graph.c */
CUresult cuStreamBeginCapture(CUstream);
CUresult cuStreamBeginCapture_v2(CUstream, CUstreamCaptureMode);
CUresult cuStreamEndCapture(CUstream, CUgraph *);
CUresult cuStreamIsCapturing(CUstream, CUstreamCaptureStatus *);
CUresult cuStreamGetDevice(CUstream, CUdevice *);
CUresult cuStreamGetCaptureInfo(CUstream, CUstreamCaptureStatus *, cuuint64_t *);
CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *);
CUresult cuGraphCreate(CUgraph *, unsigned);
CUresult cuGraphAddMemAllocNode(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
                                CUDA_MEM_ALLOC_NODE_PARAMS *);
CUresult cuGraphAddMemFreeNode(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUdeviceptr);
CUresult cuGraphAddMemsetNode(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
                              const CUDA_MEMSET_NODE_PARAMS *, CUcontext);
CUresult cuGraphDestroy(CUgraph);
CUresult cuGraphInstantiateWithFlags(CUgraphExec *, CUgraph, unsigned long long);
CUresult cuGraphExecDestroy(CUgraphExec);
CUresult cuGraphLaunch(CUgraphExec, CUstream);
CUresult cuDeviceGraphMemTrim(CUdevice);
CUresult cuDeviceGetGraphMemAttribute(CUdevice, int, void *);
CUresult cuDeviceSetGraphMemAttribute(CUdevice, int, void *);
/* in cuda_ipc.c */
CUresult cuIpcGetMemHandle(CUipcMemHandle *, CUdeviceptr);
CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *, CUipcMemHandle, unsigned);
CUresult cuIpcCloseMemHandle(CUdeviceptr);
/* in cuda_peer.c */
CUresult cuDeviceCanAccessPeer(int *, CUdevice, CUdevice);
CUresult cuCtxEnablePeerAccess(CUcontext, unsigned);
CUresult cuCtxDisablePeerAccess(CUcontext);
/* in cuda_ckpt.c */
CUresult cuCheckpointProcessGetState(int, CUprocessState *);
CUresult cuCheckpointProcessLock(int, CUcheckpointLockArgs *);
CUresult cuCheckpointProcessCheckpoint(int, CUcheckpointCheckpointArgs *);
CUresult cuCheckpointProcessRestore(int, CUcheckpointRestoreArgs *);
CUresult cuCheckpointProcessUnlock(int, CUcheckpointUnlockArgs *);

static const struct {
    const char *name;
    void *fn;
    int since; /* the CUDA version that introduced this variant */
} procs[] = {
#define P(base, fn, since)                                                                         \
    {                                                                                              \
        base, (void *)fn, since                                                                    \
    }
    P("cuInit", cuInit, 2000),
    P("cuDriverGetVersion", cuDriverGetVersion, 2020),
    P("cuDeviceGetCount", cuDeviceGetCount, 2000),
    P("cuDeviceGet", cuDeviceGet, 2000),
    P("cuDeviceGetName", cuDeviceGetName, 2000),
    P("cuDeviceTotalMem", cuDeviceTotalMem_v2, 3020),
    P("cuDeviceGetUuid", cuDeviceGetUuid_v2, 11040),
    P("cuDeviceGetUuid", cuDeviceGetUuid, 9020),
    P("cuDeviceGetAttribute", cuDeviceGetAttribute, 2000),
    P("cuCtxCreate", cuCtxCreate_v2, 3020),
    P("cuCtxDestroy", cuCtxDestroy_v2, 4000),
    P("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain, 7000),
    P("cuDevicePrimaryCtxRelease", cuDevicePrimaryCtxRelease_v2, 11000),
    P("cuCtxSetCurrent", cuCtxSetCurrent, 4000),
    P("cuCtxGetCurrent", cuCtxGetCurrent, 4000),
    P("cuCtxGetDevice", cuCtxGetDevice, 2000),
    P("cuCtxSynchronize", cuCtxSynchronize, 2000),
    P("cuDeviceCanAccessPeer", cuDeviceCanAccessPeer, 4000),
    P("cuCtxEnablePeerAccess", cuCtxEnablePeerAccess, 4000),
    P("cuCtxDisablePeerAccess", cuCtxDisablePeerAccess, 4000),
    P("cuMemGetInfo", cuMemGetInfo_v2, 3020),
    P("cuMemAlloc", cuMemAlloc_v2, 3020),
    P("cuMemFree", cuMemFree_v2, 3020),
    P("cuMemcpyHtoD", cuMemcpyHtoD_v2, 3020),
    P("cuMemcpyDtoH", cuMemcpyDtoH_v2, 3020),
    P("cuMemcpyDtoD", cuMemcpyDtoD_v2, 3020),
    P("cuMemsetD8", cuMemsetD8_v2, 3020),
    P("cuMemAllocPitch", cuMemAllocPitch_v2, 3020),
    P("cuMemAllocManaged", cuMemAllocManaged, 6000),
    P("cuMemAllocAsync", cuMemAllocAsync, 11020),
    P("cuMemAllocFromPoolAsync", cuMemAllocFromPoolAsync, 11020),
    P("cuMemFreeAsync", cuMemFreeAsync, 11020),
    P("cuMemGetAddressRange", cuMemGetAddressRange_v2, 3020),
    P("cuMemCreate", cuMemCreate, 10020),
    P("cuMemRelease", cuMemRelease, 10020),
    P("cuMemAddressReserve", cuMemAddressReserve, 10020),
    P("cuMemAddressFree", cuMemAddressFree, 10020),
    P("cuMemMap", cuMemMap, 10020),
    P("cuMemUnmap", cuMemUnmap, 10020),
    P("cuMemSetAccess", cuMemSetAccess, 10020),
    P("cuMemGetAllocationGranularity", cuMemGetAllocationGranularity, 10020),
    P("cuArrayCreate", cuArrayCreate_v2, 3020),
    P("cuArray3DCreate", cuArray3DCreate_v2, 3020),
    P("cuArrayDestroy", cuArrayDestroy, 2000),
    P("cuCheckpointProcessGetState", cuCheckpointProcessGetState, 12080),
    P("cuCheckpointProcessLock", cuCheckpointProcessLock, 12080),
    P("cuCheckpointProcessCheckpoint", cuCheckpointProcessCheckpoint, 12080),
    P("cuCheckpointProcessRestore", cuCheckpointProcessRestore, 12080),
    P("cuCheckpointProcessUnlock", cuCheckpointProcessUnlock, 12080),
    P("cuStreamCreate", cuStreamCreate, 2000),
    P("cuStreamDestroy", cuStreamDestroy_v2, 4000),
    P("cuStreamSynchronize", cuStreamSynchronize, 2000),
    P("cuEventCreate", cuEventCreate, 2000),
    P("cuEventRecord", cuEventRecord, 2000),
    P("cuEventSynchronize", cuEventSynchronize, 2000),
    P("cuEventDestroy", cuEventDestroy_v2, 4000),
    P("cuMemcpyDtoHAsync", cuMemcpyDtoHAsync_v2, 3020),
    P("cuMemcpyHtoDAsync", cuMemcpyHtoDAsync_v2, 3020),
    P("cuMemHostRegister", cuMemHostRegister_v2, 6050),
    P("cuMemHostUnregister", cuMemHostUnregister, 4000),
    P("cuMemExportToShareableHandle", cuMemExportToShareableHandle, 10020),
    P("cuMemImportFromShareableHandle", cuMemImportFromShareableHandle, 10020),
    P("cuMemGetAllocationPropertiesFromHandle", cuMemGetAllocationPropertiesFromHandle, 10020),
    P("cuStreamWaitEvent", cuStreamWaitEvent, 3020),
    P("cuEventQuery", cuEventQuery, 2000),
    P("cuMemcpyDtoDAsync", cuMemcpyDtoDAsync_v2, 3020),
    P("cuMemsetD8Async", cuMemsetD8Async, 3020),
    P("cuMemsetD32Async", cuMemsetD32Async, 3020),
    P("cuMemPoolCreate", cuMemPoolCreate, 11020),
    P("cuMemPoolDestroy", cuMemPoolDestroy, 11020),
    P("cuMemPoolTrimTo", cuMemPoolTrimTo, 11020),
    P("cuMemPoolSetAttribute", cuMemPoolSetAttribute, 11020),
    P("cuMemPoolGetAttribute", cuMemPoolGetAttribute, 11020),
    P("cuMemPoolSetAccess", cuMemPoolSetAccess, 11020),
    P("cuMemPoolGetAccess", cuMemPoolGetAccess, 11020),
    P("cuDeviceGetDefaultMemPool", cuDeviceGetDefaultMemPool, 11020),
    P("cuDeviceGetMemPool", cuDeviceGetMemPool, 11020),
    P("cuDeviceSetMemPool", cuDeviceSetMemPool, 11020),
    P("cuStreamBeginCapture", cuStreamBeginCapture, 10000),
    P("cuStreamBeginCapture", cuStreamBeginCapture_v2, 10010),
    P("cuStreamEndCapture", cuStreamEndCapture, 10000),
    P("cuStreamIsCapturing", cuStreamIsCapturing, 10000),
    P("cuStreamGetDevice", cuStreamGetDevice, 12080),
    P("cuStreamGetCaptureInfo", cuStreamGetCaptureInfo, 10010),
    P("cuThreadExchangeStreamCaptureMode", cuThreadExchangeStreamCaptureMode, 10010),
    P("cuGraphCreate", cuGraphCreate, 10000),
    P("cuGraphAddMemAllocNode", cuGraphAddMemAllocNode, 11040),
    P("cuGraphAddMemFreeNode", cuGraphAddMemFreeNode, 11040),
    P("cuGraphAddMemsetNode", cuGraphAddMemsetNode, 10000),
    P("cuGraphDestroy", cuGraphDestroy, 10000),
    P("cuGraphInstantiate", cuGraphInstantiateWithFlags, 12000),
    P("cuGraphInstantiateWithFlags", cuGraphInstantiateWithFlags, 11040),
    P("cuGraphExecDestroy", cuGraphExecDestroy, 10000),
    P("cuGraphLaunch", cuGraphLaunch, 10000),
    P("cuDeviceGraphMemTrim", cuDeviceGraphMemTrim, 11040),
    P("cuDeviceGetGraphMemAttribute", cuDeviceGetGraphMemAttribute, 11040),
    P("cuDeviceSetGraphMemAttribute", cuDeviceSetGraphMemAttribute, 11040),
    P("cuIpcGetMemHandle", cuIpcGetMemHandle, 4010),
    P("cuIpcOpenMemHandle", cuIpcOpenMemHandle_v2, 11000),
    P("cuIpcCloseMemHandle", cuIpcCloseMemHandle, 4010),
    P("cuGetErrorName", cuGetErrorName, 6000),
    P("cuGetErrorString", cuGetErrorString, 6000),
#undef P
};

/* per-thread default stream variants, handed out with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (2) as the real driver does */
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *, size_t, CUstream);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr, CUstream);

static const struct {
    const char *name;
    void *fn;
} ptsz[] = {
    {"cuMemAllocAsync", (void *)cuMemAllocAsync_ptsz},
    {"cuMemAllocFromPoolAsync", (void *)cuMemAllocFromPoolAsync_ptsz},
    {"cuMemFreeAsync", (void *)cuMemFreeAsync_ptsz},
};

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                    int *status)
{
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    int found = 0;
    int best = -1;
    for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++) {
        if (strcmp(procs[i].name, symbol) != 0)
            continue;
        found = 1;
        if (procs[i].since <= version && (best < 0 || procs[i].since > procs[best].since))
            best = (int)i;
    }
    if (best < 0) {
        if (status)
            *status = found ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                            : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        return CUDA_ERROR_NOT_FOUND;
    }
    *pfn = procs[best].fn;
    for (size_t i = 0; (flags & 2) && i < sizeof ptsz / sizeof ptsz[0]; i++)
        if (strcmp(ptsz[i].name, symbol) == 0)
            *pfn = ptsz[i].fn;
    if (status)
        *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}
