/* cuda_stream: streams, asynchronous copies and pinned host memory in the
 * simulated libcuda.so.1. Simulated device memory is host memory, so an
 * "asynchronous" copy is done by the time it returns; what the simulation
 * keeps is the API's contract: a stream must exist, a copy must stay
 * inside live allocations (a copy to memory that was unmapped fails as it
 * would on a GPU), and host memory is registered once and unregistered
 * once. */
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

EXPORT CUresult cuStreamSynchronize(CUstream s)
{
    (void)s; /* the null stream too: everything is done already */
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    simcu_gate();
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
    (void)s;
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!ev)
        return CUDA_ERROR_INVALID_HANDLE;
    ((struct event *)ev)->recorded = 1;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuEventSynchronize(CUevent ev)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!ev)
        return CUDA_ERROR_INVALID_HANDLE;
    simcu_gate();
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

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    (void)s;
    return cuMemcpyDtoH_v2(dst, src, n);
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    (void)s;
    return cuMemcpyHtoD_v2(dst, src, n);
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
