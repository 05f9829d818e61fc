/* vmm: the wrapped virtual memory entry points. The physical allocation is
 * what costs VRAM; reserving address space and mapping are free. PyTorch's
 * expandable segments and JAX's allocator take this path. With fast swap
 * on, every physical allocation is also recorded in the swap table (with
 * its mapping, its references and who may access it), and the handle the
 * application holds is translated to the driver's current one: after a
 * swap the driver's handle is a new one, the application's is not. */
#include <string.h>

#include "shim/driver.h"
#include "shim/gate.h"
#include "shim/reach.h"
#include "shim/shim.h"
#include "shim/vmm.h"

/* The driver's handle for the application's, under the table's lock. */
static uint64_t real_handle(uint64_t id)
{
    if (!shim.swap)
        return id;
    pthread_mutex_lock(&shim.swaptable.mu);
    uint64_t r = swaptable_real_of(&shim.swaptable, id);
    pthread_mutex_unlock(&shim.swaptable.mu);
    return r;
}

SHIM_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size,
                                 const CUmemAllocationProp *prop, unsigned long long flags)
{
    GATE_SCOPE();
    if (!REAL(cuMemCreate))
        return CUDA_ERROR_NOT_INITIALIZED;
    /* the memory is where prop puts it, whatever context is current; on
     * the host (a location of another type) it is no GPU's memory */
    int dev = prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? prop->location.id : -1;
    uint64_t charge = dev >= 0 ? shim_pages(size) : 0;
    if (!shim_budget_take(dev, charge))
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult rc = real_cuMemCreate(h, size, prop, flags);
    if (rc != CUDA_SUCCESS) {
        shim_budget_give(dev, charge);
        return rc;
    }
    if (shim.swap && prop) {
        /* the application gets a handle of ours: the driver's changes with
         * every swap, and a value it frees may come back for another */
        struct swaptable_entry p = {.real = *h, .size = size, .prop = *prop, .refs = 1};
        pthread_mutex_lock(&shim.swaptable.mu);
        p.id = swaptable_new_id(&shim.swaptable);
        if (swaptable_add(&shim.swaptable, &p) == 0)
            *h = p.id;
        else
            shim.swaptable.block[SWAPTABLE_PIECES]++; /* untracked: never swap this process */
        pthread_mutex_unlock(&shim.swaptable.mu);
    }
    if (allocs_put(&shim.allocs, *h, ALLOCS_VMM, charge, dev) < 0)
        shim_budget_give(dev, charge);
    return rc;
}

SHIM_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
    GATE_SCOPE();
    if (!REAL(cuMemRelease))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real_cuMemRelease(real_handle(h));
    static const enum allocs_kind kinds[] = {ALLOCS_VMM, ALLOCS_IMPORTED};
    if (rc == CUDA_SUCCESS)
        shim_give_back(h, kinds, 2);
    if (rc == CUDA_SUCCESS && shim.swap) {
        pthread_mutex_lock(&shim.swaptable.mu);
        struct swaptable_entry *p = swaptable_by_id(&shim.swaptable, h);
        if (p && --p->refs <= 0 && p->maps == 0)
            swaptable_remove(&shim.swaptable, p);
        pthread_mutex_unlock(&shim.swaptable.mu);
    }
    return rc;
}

/* The device an imported allocation lives on, as its properties say; the
 * current context's when the driver cannot tell; -1 on the host. */
static int imported_device(CUmemGenericAllocationHandle h)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    if (real_cuMemGetAllocationPropertiesFromHandle &&
        real_cuMemGetAllocationPropertiesFromHandle(&prop, h) == CUDA_SUCCESS)
        return prop.location.type == CU_MEM_LOCATION_TYPE_DEVICE ? prop.location.id : -1;
    return shim_device_now();
}

/* Memory another process exported: its size is only known when mapped, so
 * the handle is recorded now and charged at its first map. */
SHIM_EXPORT CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *h,
                                                    void *os_handle, int type)
{
    GATE_SCOPE();
    if (!REAL(cuMemImportFromShareableHandle))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real_cuMemImportFromShareableHandle(h, os_handle, type);
    if (rc == CUDA_SUCCESS)
        allocs_put(&shim.allocs, *h, ALLOCS_IMPORTED, 0, -1);
    return rc;
}

SHIM_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                              CUmemGenericAllocationHandle h, unsigned long long flags)
{
    GATE_SCOPE();
    if (!REAL(cuMemMap))
        return CUDA_ERROR_NOT_INITIALIZED;
    struct allocs_entry e;
    bool imported = allocs_get(&shim.allocs, h, ALLOCS_IMPORTED, &e) == 0 && e.bytes == 0;
    uint64_t charge = imported ? shim_pages(size) : 0;
    int dev = imported ? imported_device(real_handle(h)) : -1;
    if (imported && dev < 0)
        charge = 0; /* on the host: no GPU's memory */
    if (!shim_budget_take(dev, charge))
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult rc = real_cuMemMap(ptr, size, offset, real_handle(h), flags);
    if (rc != CUDA_SUCCESS)
        shim_budget_give(dev, charge);
    else if (imported)
        allocs_put(&shim.allocs, h, ALLOCS_IMPORTED, charge, dev);
    if (rc == CUDA_SUCCESS && shim.swap) {
        pthread_mutex_lock(&shim.swaptable.mu);
        struct swaptable_entry *p = swaptable_by_id(&shim.swaptable, h);
        if (p && p->maps == 0 && offset == 0 && size == p->size)
            p->va = ptr;
        else if (p)
            shim.swaptable.block[SWAPTABLE_PIECES]++;
        if (p)
            p->maps++;
        pthread_mutex_unlock(&shim.swaptable.mu);
    }
    return rc;
}

SHIM_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    GATE_SCOPE();
    if (!REAL(cuMemUnmap))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real_cuMemUnmap(ptr, size);
    if (rc == CUDA_SUCCESS && shim.swap) {
        /* one call may unmap several allocations (PyTorch unmaps a run of
         * its segment's pages at once); walk down, removal moves the last */
        pthread_mutex_lock(&shim.swaptable.mu);
        for (unsigned i = shim.swaptable.n; i-- > 0;) {
            struct swaptable_entry *p = &shim.swaptable.v[i];
            if (p->own || !p->va || p->va < ptr || p->va - ptr >= size)
                continue;
            p->va = 0;
            if (--p->maps <= 0 && p->refs <= 0)
                swaptable_remove(&shim.swaptable, p);
        }
        pthread_mutex_unlock(&shim.swaptable.mu);
    }
    return rc;
}

/* Reservations are remembered so that a swap never unmaps or grants across
 * two of them in one call. */
SHIM_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align,
                                         CUdeviceptr addr, unsigned long long flags)
{
    GATE_SCOPE();
    if (!REAL(cuMemAddressReserve))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real_cuMemAddressReserve(ptr, size, align, addr, flags);
    if (rc == CUDA_SUCCESS && shim.swap && ptr) {
        pthread_mutex_lock(&shim.swaptable.mu);
        if (swaptable_res_add(&shim.swaptable, *ptr, size) < 0)
            shim.swaptable.block[SWAPTABLE_PIECES]++; /* unknown bounds: never swap this process */
        pthread_mutex_unlock(&shim.swaptable.mu);
    }
    return rc;
}

SHIM_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    GATE_SCOPE();
    if (!REAL(cuMemAddressFree))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real_cuMemAddressFree(ptr, size);
    if (rc == CUDA_SUCCESS && shim.swap) {
        pthread_mutex_lock(&shim.swaptable.mu);
        swaptable_res_del(&shim.swaptable, ptr);
        pthread_mutex_unlock(&shim.swaptable.mu);
    }
    return rc;
}

/* Access to other GPUs (PyTorch gives its peers access to its expandable
 * segments) is recorded on each entry the range maps, so that a resume
 * grants it again (reach.c). */
SHIM_EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                                    size_t count)
{
    GATE_SCOPE();
    if (!REAL(cuMemSetAccess))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real_cuMemSetAccess(ptr, size, desc, count);
    if (rc == CUDA_SUCCESS && shim.swap && desc) {
        pthread_mutex_lock(&shim.swaptable.mu);
        reach_note(ptr, size, desc, count);
        pthread_mutex_unlock(&shim.swaptable.mu);
    }
    return rc;
}

SHIM_EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *h, void *addr)
{
    GATE_SCOPE();
    if (!REAL(cuMemRetainAllocationHandle))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real_cuMemRetainAllocationHandle(h, addr);
    if (rc == CUDA_SUCCESS && shim.swap && h) {
        pthread_mutex_lock(&shim.swaptable.mu);
        struct swaptable_entry *p = swaptable_by_real(&shim.swaptable, *h);
        if (p) {
            *h = p->id;
            p->refs++;
        }
        pthread_mutex_unlock(&shim.swaptable.mu);
    }
    return rc;
}

SHIM_EXPORT CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
                                                            CUmemGenericAllocationHandle h)
{
    GATE_SCOPE();
    if (!REAL(cuMemGetAllocationPropertiesFromHandle))
        return CUDA_ERROR_NOT_INITIALIZED;
    return real_cuMemGetAllocationPropertiesFromHandle(prop, real_handle(h));
}

/* Memory shared with another process cannot leave the GPU behind its back. */
SHIM_EXPORT CUresult cuMemExportToShareableHandle(void *out, CUmemGenericAllocationHandle h,
                                                  int type, unsigned long long flags)
{
    GATE_SCOPE();
    if (!REAL(cuMemExportToShareableHandle))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real_cuMemExportToShareableHandle(out, real_handle(h), type, flags);
    if (rc == CUDA_SUCCESS && shim.swap) {
        pthread_mutex_lock(&shim.swaptable.mu);
        shim.swaptable.block[SWAPTABLE_EXPORTED]++;
        pthread_mutex_unlock(&shim.swaptable.mu);
    }
    return rc;
}
