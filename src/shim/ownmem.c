/* ownmem: the device memory libvramcap makes itself under fast swap (see
 * ownmem.h). */
#include "shim/ownmem.h"

#include <string.h>

#include "shim/driver.h"
#include "shim/reach.h"
#include "shim/share.h"
#include "shim/shim.h"

static size_t gran[SHIM_MAX_DEVICES];
static bool no_export[SHIM_MAX_DEVICES]; /* the driver makes no exportable memory there */

static bool dev_ok(int dev)
{
    return dev >= 0 && dev < SHIM_MAX_DEVICES;
}

static CUmemAllocationProp device_prop(int dev)
{
    CUmemAllocationProp p;
    memset(&p, 0, sizeof p);
    p.type = 1;          /* pinned device memory */
    p.location.type = 1; /* a device */
    p.location.id = dev;
    return p;
}

/* A physical allocation of size bytes on dev, mapped whole in a
 * reservation of its own and recorded as libvramcap's (own): given access
 * for its own device, the peers that enabled access to it (reach.c) and
 * the devices in extra; a pool chunk (ownpool.c) is marked so that no
 * cuMemFree takes it. The range and its size (rounded to the granularity)
 * out. */
static CUresult make_own(int dev, size_t size, uint64_t extra, bool chunk, CUdeviceptr *dptr,
                         uint64_t *got, bool *no_range)
{
    *no_range = false;
    CUmemAllocationProp prop = device_prop(dev);
    /* a cuMemAlloc may be shared with another process (share.c): the
     * memory must be exportable, where the driver allows it */
    if (!chunk && !no_export[dev])
        prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    if (!gran[dev] && real_cuMemGetAllocationGranularity(&gran[dev], &prop, 0) != CUDA_SUCCESS)
        gran[dev] = SHIM_PAGE;
    uint64_t g = gran[dev] ? gran[dev] : SHIM_PAGE;
    uint64_t n = ((uint64_t)(size ? size : 1) + g - 1) / g * g;
    CUdeviceptr va = 0;
    CUmemGenericAllocationHandle h = 0;
    CUresult rc = real_cuMemAddressReserve(&va, n, 0, 0, 0);
    if (rc != CUDA_SUCCESS) {
        *no_range = true;
        return rc;
    }
    rc = real_cuMemCreate(&h, n, &prop, 0);
    if (prop.requestedHandleTypes &&
        (rc == CUDA_ERROR_NOT_SUPPORTED || rc == CUDA_ERROR_INVALID_VALUE)) {
        no_export[dev] = true; /* not here: no IPC of it, the rest as before */
        prop.requestedHandleTypes = 0;
        rc = real_cuMemCreate(&h, n, &prop, 0);
    }
    if (rc == CUDA_SUCCESS && (rc = real_cuMemMap(va, n, 0, h, 0)) == CUDA_SUCCESS) {
        /* granted under the table's lock: peer access enabled meanwhile
         * (reach.c) finds it in the table or has already widened the grant */
        struct swaptable_entry p = {
            .real = h, .size = n, .va = va, .prop = prop, .maps = 1, .own = true, .chunk = chunk};
        pthread_mutex_lock(&shim.swaptable.mu);
        reach_own(&p);
        p.readers |= extra;
        p.writers |= extra;
        p.id = swaptable_new_id(&shim.swaptable);
        if ((rc = reach_grant(&p)) == CUDA_SUCCESS && swaptable_add(&shim.swaptable, &p) < 0)
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        pthread_mutex_unlock(&shim.swaptable.mu);
        if (rc != CUDA_SUCCESS)
            real_cuMemUnmap(va, n);
    }
    if (rc != CUDA_SUCCESS) {
        if (h)
            real_cuMemRelease(h);
        real_cuMemAddressFree(va, n);
        return rc;
    }
    *dptr = va;
    *got = n;
    return CUDA_SUCCESS;
}

CUresult ownmem_alloc(CUdeviceptr *dptr, size_t size, bool *plain)
{
    int dev = shim_device_now();
    *plain = false;
    if (!dptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (!dev_ok(dev) || !real_cuMemCreate || !real_cuMemAddressReserve) {
        *plain = true;
        return real_cuMemAlloc_v2(dptr, size);
    }
    uint64_t got;
    bool no_range;
    CUresult rc = make_own(dev, size, 0, false, dptr, &got, &no_range);
    if (!no_range)
        return rc;
    /* no VMM here (the reservation failed): the driver's own, unmovable */
    *plain = true;
    return real_cuMemAlloc_v2(dptr, size);
}

CUresult ownmem_chunk(int dev, size_t size, uint64_t access, CUdeviceptr *dptr, uint64_t *got)
{
    bool no_range;
    if (!dev_ok(dev) || !real_cuMemCreate || !real_cuMemAddressReserve)
        return CUDA_ERROR_NOT_SUPPORTED;
    return make_own(dev, size, access, true, dptr, got, &no_range);
}

/* Unmaps, releases and frees the range of one of libvramcap's own entries
 * (0 when dptr is none, or, unless chunks, a pool's chunk). */
static int drop_own(CUdeviceptr dptr, bool chunks)
{
    struct swaptable_entry p = {0};
    pthread_mutex_lock(&shim.swaptable.mu);
    struct swaptable_entry *e = swaptable_by_va(&shim.swaptable, dptr);
    if (e && e->own && e->chunk == chunks) {
        p = *e;
        swaptable_remove(&shim.swaptable, e);
    }
    pthread_mutex_unlock(&shim.swaptable.mu);
    if (!p.own)
        return 0;
    real_cuMemUnmap(p.va, p.size);
    real_cuMemRelease(p.real);
    real_cuMemAddressFree(p.va, p.size);
    if (!chunks) /* whoever opened it keeps what it mapped */
        share_forget(p.id);
    return 1;
}

CUresult ownmem_free(CUdeviceptr dptr)
{
    return drop_own(dptr, false) ? CUDA_SUCCESS : real_cuMemFree_v2(dptr);
}

void ownmem_chunk_free(CUdeviceptr dptr)
{
    drop_own(dptr, true);
}

CUresult ownmem_chunk_access(CUdeviceptr dptr, uint64_t readers, uint64_t writers)
{
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&shim.swaptable.mu);
    struct swaptable_entry *p = swaptable_by_va(&shim.swaptable, dptr);
    if (p && p->chunk) {
        uint64_t own = 1ULL << p->prop.location.id, gone = (p->readers | p->writers) & ~readers;
        p->readers = readers | own;
        p->writers = writers | own;
        if (p->real) /* swapped out: the resume grants what is recorded */
            rc = reach_grant(p);
        for (int dev = 0; rc == CUDA_SUCCESS && p->real && dev < SHIM_MAX_DEVICES; dev++)
            if (gone & ~own & (1ULL << dev)) {
                CUmemAccessDesc d = {{1, dev}, 0};
                rc = real_cuMemSetAccess(p->va, p->size, &d, 1);
            }
    }
    pthread_mutex_unlock(&shim.swaptable.mu);
    return rc;
}
