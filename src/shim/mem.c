/* mem: the wrapped allocation entry points. Each one reserves from the
 * budget before asking the driver (so concurrent allocations never overshoot
 * the cap), gives the reservation back if the driver says no, and records
 * what it charged in the allocation table, which is what the free gives
 * back. Over the cap, the answer is CUDA_ERROR_OUT_OF_MEMORY, which every
 * framework turns into its usual out-of-memory error. */
#include <string.h>

#include "shim/driver.h"
#include "shim/gate.h"
#include "shim/mem.h"
#include "shim/ownmem.h"
#include "shim/ownpool.h"
#include "shim/share.h"
#include "shim/shim.h"

/* Before the driver is asked: the current context's device (where these
 * entry points allocate) into *dev, and bytes taken from its budget.
 * CUDA_SUCCESS, or what to answer instead: without a context the driver
 * would refuse too, and with a cap nothing is allocated uncharged. */
static CUresult take(int *dev, uint64_t bytes)
{
    *dev = shim_device_now();
    if (!shim.capped)
        return CUDA_SUCCESS;
    if (*dev < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    return shim_budget_take(*dev, bytes) ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* After the driver answered: keep the charge and remember it, or give it
 * back. A table that cannot grow gives the charge back rather than leak it. */
static CUresult settle(CUresult rc, uint64_t key, enum allocs_kind kind, int dev, uint64_t bytes)
{
    if (rc != CUDA_SUCCESS) {
        shim_budget_give(dev, bytes);
        return rc;
    }
    if (allocs_put(&shim.allocs, key, kind, bytes, dev) < 0)
        shim_budget_give(dev, bytes);
    return rc;
}

static const enum allocs_kind linear_kinds[] = {ALLOCS_LINEAR, ALLOCS_ASYNC,   ALLOCS_MANAGED,
                                                ALLOCS_FIXED,  ALLOCS_OWNPOOL, ALLOCS_GRAPH};
#define NLINEAR (sizeof linear_kinds / sizeof linear_kinds[0])

SHIM_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size)
{
    GATE_SCOPE();
    if (!REAL(cuMemAlloc_v2))
        return CUDA_ERROR_NOT_INITIALIZED;
    uint64_t charge = shim_pages(size);
    int dev;
    CUresult rc = take(&dev, charge);
    if (rc != CUDA_SUCCESS)
        return rc;
    /* with fast swap on, the memory is the VMM's, so it can leave its
     * addresses and come back to them */
    bool plain = !shim.swap;
    rc = plain ? real_cuMemAlloc_v2(dptr, size) : ownmem_alloc(dptr, size, &plain);
    return settle(rc, rc == CUDA_SUCCESS ? *dptr : 0,
                  plain && shim.swap ? ALLOCS_FIXED : ALLOCS_LINEAR, dev, charge);
}

SHIM_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width,
                                        size_t height, unsigned elem)
{
    GATE_SCOPE();
    if (!REAL(cuMemAllocPitch_v2))
        return CUDA_ERROR_NOT_INITIALIZED;
    /* the pitch is only known after: reserve for 512-byte rows, the
     * alignment of every current GPU, and settle on the real figure */
    uint64_t row = ((uint64_t)width + 511) & ~511ULL;
    uint64_t charge = height && row > UINT64_MAX / height ? UINT64_MAX : shim_pages(row * height);
    int dev;
    CUresult rc = take(&dev, charge);
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = real_cuMemAllocPitch_v2(dptr, pitch, width, height, elem);
    if (rc == CUDA_SUCCESS && pitch) {
        uint64_t real = shim_pages((uint64_t)*pitch * height);
        if (real > charge && !shim_budget_take(dev, real - charge)) {
            REAL(cuMemFree_v2)(*dptr);
            shim_budget_give(dev, charge);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        if (real < charge)
            shim_budget_give(dev, charge - real);
        charge = real;
    }
    return settle(rc, rc == CUDA_SUCCESS ? *dptr : 0, ALLOCS_FIXED, dev, charge);
}

SHIM_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t size, unsigned flags)
{
    GATE_SCOPE();
    if (!REAL(cuMemAllocManaged))
        return CUDA_ERROR_NOT_INITIALIZED;
    uint64_t charge = shim_pages(size);
    int dev;
    CUresult rc = take(&dev, charge);
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = real_cuMemAllocManaged(dptr, size, flags);
    return settle(rc, rc == CUDA_SUCCESS ? *dptr : 0, ALLOCS_MANAGED, dev, charge);
}

SHIM_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    GATE_SCOPE();
    if (!REAL(cuMemFree_v2))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc;
    if (!shim.swap)
        rc = real_cuMemFree_v2(dptr);
    else if (!ownpool_free_now(dptr, &rc)) /* a pool's memory goes back to it */
        rc = ownmem_free(dptr);
    if (rc == CUDA_SUCCESS)
        shim_give_back(dptr, linear_kinds, NLINEAR);
    return rc;
}

/* A pool hands out memory it may already hold; counting what is handed out
 * (not what the pool reserved) is what the application asked for, and what
 * a pool with the default release threshold holds once it synchronizes.
 * With fast swap on, the pools are libvramcap's (ownpool.c), so that a
 * suspend can move them. */
static CUresult alloc_async(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, bool has_pool,
                            CUstream stream, bool ptsz)
{
    uint64_t charge = shim_pages(size);
    int dev;
    CUresult rc = take(&dev, charge);
    if (rc != CUDA_SUCCESS)
        return rc;
    enum allocs_kind kind = ALLOCS_ASYNC;
    if (shim.swap)
        rc = ownpool_alloc(dptr, size, pool, has_pool, stream, ptsz, &kind);
    else if (has_pool)
        rc = ptsz ? real_cuMemAllocFromPoolAsync_ptsz(dptr, size, pool, stream)
                  : real_cuMemAllocFromPoolAsync(dptr, size, pool, stream);
    else
        rc = ptsz ? real_cuMemAllocAsync_ptsz(dptr, size, stream)
                  : real_cuMemAllocAsync(dptr, size, stream);
    return settle(rc, rc == CUDA_SUCCESS ? *dptr : 0, kind, dev, charge);
}

SHIM_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t size, CUstream stream)
{
    GATE_SCOPE();
    if (!REAL(cuMemAllocAsync))
        return CUDA_ERROR_NOT_INITIALIZED;
    return alloc_async(dptr, size, NULL, false, stream, false);
}

SHIM_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t size, CUstream stream)
{
    GATE_SCOPE();
    if (!REAL(cuMemAllocAsync_ptsz))
        return CUDA_ERROR_NOT_INITIALIZED;
    return alloc_async(dptr, size, NULL, false, stream, true);
}

SHIM_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t size, CUmemoryPool pool,
                                             CUstream stream)
{
    GATE_SCOPE();
    if (!REAL(cuMemAllocFromPoolAsync))
        return CUDA_ERROR_NOT_INITIALIZED;
    return alloc_async(dptr, size, pool, true, stream, false);
}

SHIM_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t size, CUmemoryPool pool,
                                                  CUstream stream)
{
    GATE_SCOPE();
    if (!REAL(cuMemAllocFromPoolAsync_ptsz))
        return CUDA_ERROR_NOT_INITIALIZED;
    return alloc_async(dptr, size, pool, true, stream, true);
}

SHIM_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
    GATE_SCOPE();
    if (!REAL(cuMemFreeAsync))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = shim.swap ? ownpool_free(dptr, stream, false) : real_cuMemFreeAsync(dptr, stream);
    if (rc == CUDA_SUCCESS)
        shim_give_back(dptr, linear_kinds, NLINEAR);
    return rc;
}

SHIM_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream)
{
    GATE_SCOPE();
    if (!REAL(cuMemFreeAsync_ptsz))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc =
        shim.swap ? ownpool_free(dptr, stream, true) : real_cuMemFreeAsync_ptsz(dptr, stream);
    if (rc == CUDA_SUCCESS)
        shim_give_back(dptr, linear_kinds, NLINEAR);
    return rc;
}

/* Bytes of a CUDA array: width x height x depth elements of the format's
 * size, as the driver lays them out before its own padding. */
static uint64_t array_bytes(size_t w, size_t h, size_t d, int format, unsigned channels)
{
    uint64_t el;
    switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
        el = 1;
        break;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
        el = 2;
        break;
    default:
        el = 4; /* 32-bit formats, and the conservative guess for the rest */
    }
    unsigned __int128 n =
        (unsigned __int128)(w ? w : 1) * (h ? h : 1) * (d ? d : 1) * el * (channels ? channels : 1);
    return n > UINT64_MAX / 2 ? UINT64_MAX / 2 : shim_pages((uint64_t)n);
}

static CUresult array_made(CUresult rc, void *handle, int dev, uint64_t charge)
{
    return settle(rc, rc == CUDA_SUCCESS ? (uint64_t)(uintptr_t)handle : 0, ALLOCS_ARRAY, dev,
                  charge);
}

SHIM_EXPORT CUresult cuArrayCreate_v2(CUarray *arr, const CUDA_ARRAY_DESCRIPTOR *desc)
{
    GATE_SCOPE();
    if (!REAL(cuArrayCreate_v2))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!desc || !arr)
        return real_cuArrayCreate_v2(arr, desc);
    uint64_t charge = array_bytes(desc->Width, desc->Height, 1, desc->Format, desc->NumChannels);
    int dev;
    CUresult rc = take(&dev, charge);
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = real_cuArrayCreate_v2(arr, desc);
    return array_made(rc, rc == CUDA_SUCCESS ? *arr : NULL, dev, charge);
}

SHIM_EXPORT CUresult cuArray3DCreate_v2(CUarray *arr, const CUDA_ARRAY3D_DESCRIPTOR *desc)
{
    GATE_SCOPE();
    if (!REAL(cuArray3DCreate_v2))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!desc || !arr)
        return real_cuArray3DCreate_v2(arr, desc);
    uint64_t charge =
        array_bytes(desc->Width, desc->Height, desc->Depth, desc->Format, desc->NumChannels);
    int dev;
    CUresult rc = take(&dev, charge);
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = real_cuArray3DCreate_v2(arr, desc);
    return array_made(rc, rc == CUDA_SUCCESS ? *arr : NULL, dev, charge);
}

SHIM_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray *arr,
                                            const CUDA_ARRAY3D_DESCRIPTOR *desc, unsigned levels)
{
    GATE_SCOPE();
    if (!REAL(cuMipmappedArrayCreate))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!desc || !arr)
        return real_cuMipmappedArrayCreate(arr, desc, levels);
    /* each level halves every dimension: the whole chain is under 8/7 of
     * the base level in 3D, 4/3 in 2D, 2 in 1D; charge the 1D bound */
    uint64_t base =
        array_bytes(desc->Width, desc->Height, desc->Depth, desc->Format, desc->NumChannels);
    uint64_t charge = levels > 1 ? shim_pages(base < UINT64_MAX / 4 ? base * 2 : base) : base;
    int dev;
    CUresult rc = take(&dev, charge);
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = real_cuMipmappedArrayCreate(arr, desc, levels);
    return array_made(rc, rc == CUDA_SUCCESS ? *arr : NULL, dev, charge);
}

SHIM_EXPORT CUresult cuArrayDestroy(CUarray arr)
{
    GATE_SCOPE();
    if (!REAL(cuArrayDestroy))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real_cuArrayDestroy(arr);
    static const enum allocs_kind kinds[] = {ALLOCS_ARRAY};
    if (rc == CUDA_SUCCESS)
        shim_give_back((uint64_t)(uintptr_t)arr, kinds, 1);
    return rc;
}

SHIM_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray arr)
{
    GATE_SCOPE();
    if (!REAL(cuMipmappedArrayDestroy))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real_cuMipmappedArrayDestroy(arr);
    static const enum allocs_kind kinds[] = {ALLOCS_ARRAY};
    if (rc == CUDA_SUCCESS)
        shim_give_back((uint64_t)(uintptr_t)arr, kinds, 1);
    return rc;
}

/* With fast swap on, memory libvramcap made (ownmem.c) is no driver's
 * allocation: libvramcap's own handle for it (share.c). */
SHIM_EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr ptr)
{
    GATE_SCOPE();
    if (!REAL(cuIpcGetMemHandle))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc;
    if (shim.swap && h && share_handle(h, ptr, &rc))
        return rc;
    return real_cuIpcGetMemHandle(h, ptr);
}

/* Memory another process shares over IPC is charged to the importer too:
 * in its view it is VRAM it holds. A handle of libvramcap's (the exporter
 * runs with fast swap) is opened by share.c. */
SHIM_EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *dptr, CUipcMemHandle h, unsigned flags)
{
    GATE_SCOPE();
    if (!REAL(cuIpcOpenMemHandle_v2))
        return CUDA_ERROR_NOT_INITIALIZED;
    size_t size = 0;
    uint64_t shared = 0;
    CUresult rc;
    int ours = share_open(dptr, &h, flags, &shared, &rc);
    if (!ours)
        rc = real_cuIpcOpenMemHandle_v2(dptr, h, flags);
    if (rc != CUDA_SUCCESS)
        return rc;
    CUdeviceptr base;
    if (ours)
        size = shared;
    else if (real_cuMemGetAddressRange_v2 && real_cuMemGetAddressRange_v2(&base, &size, *dptr))
        size = 0;
    uint64_t charge = shim_pages(size);
    int dev;
    CUresult taken = take(&dev, charge);
    if (taken != CUDA_SUCCESS) {
        if (!ours || !share_close(*dptr))
            REAL(cuIpcCloseMemHandle)(*dptr);
        return taken;
    }
    return settle(rc, *dptr, ours ? ALLOCS_SHARED : ALLOCS_IPC, dev, charge);
}

SHIM_EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{
    GATE_SCOPE();
    if (!REAL(cuIpcCloseMemHandle))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = share_close(dptr) ? CUDA_SUCCESS : real_cuIpcCloseMemHandle(dptr);
    static const enum allocs_kind kinds[] = {ALLOCS_IPC, ALLOCS_SHARED};
    if (rc == CUDA_SUCCESS)
        shim_give_back(dptr, kinds, 2);
    return rc;
}
