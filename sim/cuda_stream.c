/* cuda_stream: streams, events, asynchronous copies and memsets, and
 * pinned host memory in the simulated libcuda.so.1. Simulated device
 * memory is host memory, so an "asynchronous" copy is done by the time it
 * returns; what the simulation keeps is the API's contract: a stream must
 * exist, a copy must stay inside live allocations (a copy to memory that
 * was unmapped fails as it would on a GPU), host memory is registered once
 * and unregistered once, work on a capturing stream goes into its graph
 * (cuda_graph.c), and a synchronize is when pools give back what they hold
 * past their release threshold (cuda_pool.c). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sim/cuda_internal.h"

#define EXPORT SIM_EXPORT

enum {
    ERR_ALREADY_REGISTERED = 712,
    ERR_NOT_REGISTERED = 713,
};

struct stream {
    CUdevice dev;
};

struct pinned {
    void *p;
    size_t n;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct pinned *pins;
static size_t npins, cap_pins;

CUresult cuMemcpyHtoD_v2(CUdeviceptr, const void *, size_t);
CUresult cuMemcpyDtoH_v2(void *, CUdeviceptr, size_t);
CUresult cuMemcpyDtoD_v2(CUdeviceptr, CUdeviceptr, size_t);
CUresult cuMemsetD8_v2(CUdeviceptr, unsigned char, size_t);

EXPORT CUresult cuStreamCreate(CUstream *out, unsigned flags)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!out || flags > 1)
        return CUDA_ERROR_INVALID_VALUE;
    CUdevice dev = simcu_device();
    if (dev < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct stream *s = malloc(sizeof *s);
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->dev = dev;
    *out = (CUstream)s;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    free(s);
    return CUDA_SUCCESS;
}

/* Not on a capturing stream: the real driver (580) answers
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and the capture is lost, as it is
 * for any call it does not allow during a capture. */
EXPORT CUresult cuStreamGetDevice(CUstream s, CUdevice *dev)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!dev)
        return CUDA_ERROR_INVALID_VALUE;
    if (simcu_capture_forbid(s))
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    bool special = s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
    *dev = special ? simcu_device() : ((struct stream *)s)->dev;
    return *dev < 0 ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
}

EXPORT CUresult cuStreamSynchronize(CUstream s)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (simcu_capturing(s)) /* the null stream too: everything is done already */
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    simcu_gate();
    simcu_pools_settle();
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent ev, unsigned flags)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!ev || flags > 1)
        return CUDA_ERROR_INVALID_VALUE;
    simcu_capture_join(s, ev); /* everything else recorded is done already */
    return CUDA_SUCCESS;
}

/* Events: recorded work is done by the time it is recorded here. */
struct event {
    int recorded;
};

EXPORT CUresult cuEventCreate(CUevent *out, unsigned flags)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!out || flags > 0xf)
        return CUDA_ERROR_INVALID_VALUE;
    if (simcu_device() < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct event *e = calloc(1, sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *out = (CUevent)e;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuEventRecord(CUevent ev, CUstream s)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!ev)
        return CUDA_ERROR_INVALID_HANDLE;
    ((struct event *)ev)->recorded = 1;
    simcu_capture_record(ev, s);
    return CUDA_SUCCESS;
}

/* Done, unless it was last recorded in a capture: a capture's events are
 * no point in any work the GPU runs */
EXPORT CUresult cuEventQuery(CUevent ev)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!ev)
        return CUDA_ERROR_INVALID_HANDLE;
    return simcu_capture_join(NULL, ev) ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

EXPORT CUresult cuEventSynchronize(CUevent ev)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!ev)
        return CUDA_ERROR_INVALID_HANDLE;
    simcu_gate();
    simcu_pools_settle();
    return CUDA_SUCCESS;
}

EXPORT CUresult cuEventDestroy_v2(CUevent ev)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!ev)
        return CUDA_ERROR_INVALID_HANDLE;
    free(ev);
    return CUDA_SUCCESS;
}

CUresult simcu_run_op(const struct simcu_op *op)
{
    switch (op->kind) {
    case SIMCU_OP_DTOD:
        return cuMemcpyDtoD_v2(op->dst, op->src, op->n);
    case SIMCU_OP_HTOD:
        return cuMemcpyHtoD_v2(op->dst, op->hsrc, op->n);
    case SIMCU_OP_DTOH:
        return cuMemcpyDtoH_v2(op->hdst, op->src, op->n);
    default:
        break;
    }
    if (op->elsize == 1)
        return cuMemsetD8_v2(op->dst, (unsigned char)op->value, op->n);
    if (op->n > SIZE_MAX / 4)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = simcu_reach(op->dst, op->n * 4, true);
    if (rc != CUDA_SUCCESS)
        return rc;
    simcu_gate();
    uint32_t *p = (uint32_t *)(uintptr_t)op->dst;
    for (size_t i = 0; i < op->n; i++)
        p[i] = op->value;
    simcu_busy();
    return CUDA_SUCCESS;
}

/* Now, or into the graph of the capture s is part of. */
static CUresult run_on(CUstream s, const struct simcu_op *op)
{
    CUresult rc;
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    return simcu_capture_op(s, op, &rc) ? rc : simcu_run_op(op);
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    struct simcu_op op = {.kind = SIMCU_OP_DTOH, .hdst = dst, .src = src, .n = n};
    return dst ? run_on(s, &op) : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    struct simcu_op op = {.kind = SIMCU_OP_HTOD, .dst = dst, .hsrc = src, .n = n};
    return src ? run_on(s, &op) : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    struct simcu_op op = {.kind = SIMCU_OP_DTOD, .dst = dst, .src = src, .n = n};
    return run_on(s, &op);
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s)
{
    struct simcu_op op = {.kind = SIMCU_OP_MEMSET, .dst = dst, .value = v, .elsize = 1, .n = n};
    return run_on(s, &op);
}

EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned v, size_t n, CUstream s)
{
    struct simcu_op op = {.kind = SIMCU_OP_MEMSET, .dst = dst, .value = v, .elsize = 4, .n = n};
    return run_on(s, &op);
}

EXPORT CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned flags)
{
    (void)flags;
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!p || n == 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < npins && rc == CUDA_SUCCESS; i++)
        if ((char *)p < (char *)pins[i].p + pins[i].n && (char *)pins[i].p < (char *)p + n)
            rc = ERR_ALREADY_REGISTERED;
    if (rc == CUDA_SUCCESS && npins == cap_pins) {
        size_t nc = cap_pins ? cap_pins * 2 : 16;
        struct pinned *np = realloc(pins, nc * sizeof *np);
        if (np)
            pins = np, cap_pins = nc;
        else
            rc = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (rc == CUDA_SUCCESS)
        pins[npins++] = (struct pinned){p, n};
    pthread_mutex_unlock(&mu);
    /* pinning faults every page in and keeps it, as the driver's does */
    if (rc == CUDA_SUCCESS)
        madvise(p, n, 23 /* MADV_POPULATE_WRITE */);
    return rc;
}

EXPORT CUresult cuMemHostUnregister(void *p)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = ERR_NOT_REGISTERED;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < npins; i++)
        if (pins[i].p == p) {
            pins[i] = pins[--npins];
            rc = CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&mu);
    return rc;
}
