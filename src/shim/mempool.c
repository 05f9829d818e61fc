/* mempool: the memory pool entry points, passed to libvramcap's own pools
 * (ownpool.c)
 * when the handle is one of theirs, to the driver otherwise. A pool the
 * program asks to be exportable to other processes (handle types), or
 * that lives anywhere but on a device, is the driver's: fast swap cannot
 * move what another process may map, and says so (swap.c). */
#include "shim/mempool.h"

#include "shim/driver.h"
#include "shim/gate.h"
#include "shim/ownpool.h"
#include "shim/shim.h"

#define PASS(name, ...)                                                                            \
    GATE_SCOPE();                                                                                  \
    if (!REAL(name))                                                                               \
        return CUDA_ERROR_NOT_INITIALIZED;                                                         \
    if (!shim.swap)                                                                                \
    return real_##name(__VA_ARGS__)

SHIM_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    PASS(cuMemPoolCreate, pool, props);
    if (props && props->handleTypes == CU_MEM_HANDLE_TYPE_NONE &&
        props->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
        return ownpool_create(pool, props);
    return real_cuMemPoolCreate(pool, props);
}

SHIM_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    PASS(cuMemPoolDestroy, pool);
    return ownpool_ours(pool) ? ownpool_destroy(pool) : real_cuMemPoolDestroy(pool);
}

SHIM_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
    PASS(cuMemPoolTrimTo, pool, keep);
    return ownpool_ours(pool) ? ownpool_trim(pool, keep) : real_cuMemPoolTrimTo(pool, keep);
}

SHIM_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool, int attr, void *value)
{
    PASS(cuMemPoolSetAttribute, pool, attr, value);
    return ownpool_ours(pool) ? ownpool_set_attr(pool, attr, value)
                              : real_cuMemPoolSetAttribute(pool, attr, value);
}

SHIM_EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool pool, int attr, void *value)
{
    PASS(cuMemPoolGetAttribute, pool, attr, value);
    return ownpool_ours(pool) ? ownpool_get_attr(pool, attr, value)
                              : real_cuMemPoolGetAttribute(pool, attr, value);
}

SHIM_EXPORT CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *desc,
                                        size_t count)
{
    PASS(cuMemPoolSetAccess, pool, desc, count);
    return ownpool_ours(pool) ? ownpool_set_access(pool, desc, count)
                              : real_cuMemPoolSetAccess(pool, desc, count);
}

SHIM_EXPORT CUresult cuMemPoolGetAccess(int *flags, CUmemoryPool pool, CUmemLocation *loc)
{
    PASS(cuMemPoolGetAccess, flags, pool, loc);
    return ownpool_ours(pool) ? ownpool_get_access(flags, pool, loc)
                              : real_cuMemPoolGetAccess(flags, pool, loc);
}

SHIM_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev)
{
    PASS(cuDeviceGetDefaultMemPool, pool, dev);
    return ownpool_default(pool, dev);
}

SHIM_EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    PASS(cuDeviceGetMemPool, pool, dev);
    return ownpool_current(pool, dev);
}

/* The driver is told too: each of our pools is also an empty one of the
 * driver's, which serves the allocations made while capturing. */
SHIM_EXPORT CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    PASS(cuDeviceSetMemPool, dev, pool);
    CUresult rc = real_cuDeviceSetMemPool(dev, pool);
    return rc == CUDA_SUCCESS ? ownpool_set_current(dev, pool, !ownpool_ours(pool)) : rc;
}

/* Ours were made with no handle types: the driver refuses those too */
SHIM_EXPORT CUresult cuMemPoolExportToShareableHandle(void *out, CUmemoryPool pool, int type,
                                                      unsigned long long flags)
{
    PASS(cuMemPoolExportToShareableHandle, out, pool, type, flags);
    return ownpool_ours(pool) ? CUDA_ERROR_INVALID_VALUE
                              : real_cuMemPoolExportToShareableHandle(out, pool, type, flags);
}

SHIM_EXPORT CUresult cuMemPoolExportPointer(void *data, CUdeviceptr ptr)
{
    PASS(cuMemPoolExportPointer, data, ptr);
    return ownpool_has(ptr) ? CUDA_ERROR_INVALID_VALUE : real_cuMemPoolExportPointer(data, ptr);
}

SHIM_EXPORT CUresult cuStreamSynchronize(CUstream s)
{
    PASS(cuStreamSynchronize, s);
    CUresult rc = real_cuStreamSynchronize(s);
    if (rc == CUDA_SUCCESS)
        ownpool_synced(OWNPOOL_SYNC_STREAM, s);
    return rc;
}

SHIM_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream s)
{
    PASS(cuStreamSynchronize_ptsz, s);
    CUresult rc = real_cuStreamSynchronize_ptsz(s);
    if (rc == CUDA_SUCCESS)
        ownpool_synced(OWNPOOL_SYNC_STREAM, s ? s : CU_STREAM_PER_THREAD);
    return rc;
}

SHIM_EXPORT CUresult cuEventSynchronize(CUevent e)
{
    PASS(cuEventSynchronize, e);
    CUresult rc = real_cuEventSynchronize(e);
    if (rc == CUDA_SUCCESS)
        ownpool_synced(OWNPOOL_SYNC_OTHER, NULL);
    return rc;
}

SHIM_EXPORT CUresult cuCtxSynchronize(void)
{
    GATE_SCOPE();
    if (!REAL(cuCtxSynchronize))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real_cuCtxSynchronize();
    if (!shim.swap)
        return rc;
    if (rc == CUDA_SUCCESS)
        ownpool_synced(OWNPOOL_SYNC_CONTEXT, NULL);
    return rc;
}

SHIM_EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
    PASS(cuStreamDestroy_v2, s);
    CUresult rc = real_cuStreamDestroy_v2(s);
    if (rc == CUDA_SUCCESS)
        ownpool_stream_gone(s);
    return rc;
}
