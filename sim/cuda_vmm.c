/* cuda_vmm: the CUDA virtual memory API and arrays in the simulated
 * libcuda.so.1.
 *
 * Physical allocations (cuMemCreate) are memfd files, reservations are
 * PROT_NONE mappings, and cuMemMap maps the file at the reserved address, so
 * the simulation keeps the real API's property that matters: the same
 * physical memory can leave an address range and come back to it with its
 * bytes intact. Physical memory is charged at creation and given back when
 * it is both released and unmapped, as the driver does. A mapping can be
 * touched only by the devices cuMemSetAccess gave it to (cuda_mem.c).
 * Unmapped whole, physical memory stays where it was, inaccessible: the
 * reservation the range goes back to; mapped there again it keeps its
 * page-table entries (sim/devmem.c says why that matters). Memory another process may map
 * (exported or imported) is never kept for reuse. */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/cuda_internal.h"
#include "sim/devmem.h"

#define EXPORT SIM_EXPORT

struct phys {
    int fd;
    size_t size;
    CUdevice dev;
    int maps;
    int released;
    int imported; /* another process's (charged to it, not here) */
    bool shared;  /* exported or imported: another process may map it */
    bool used;    /* mapped once: its memory may hold what its owner wrote */
    CUmemAllocationProp prop;
};

struct mapping {
    CUdeviceptr ptr;
    size_t size;
    size_t offset; /* into phys */
    struct phys *phys;
};

struct array {
    size_t charged;
    CUdevice dev;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct mapping *maps;
static size_t nmaps, cap_maps;

static void phys_maybe_free(struct phys *p)
{
    if (!p->released || p->maps > 0)
        return;
    if (p->shared) /* another process may still map it: never handed out again */
        simdevmem_fd_close(p->fd);
    else
        simdevmem_fd_release(p->fd, p->size, p->dev);
    if (!p->imported)
        simcu_charge(p->dev, -(int64_t)p->size);
    free(p);
}

EXPORT CUresult cuMemGetAllocationGranularity(size_t *gran, const CUmemAllocationProp *prop,
                                              int option)
{
    (void)option;
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!gran || !prop)
        return CUDA_ERROR_INVALID_VALUE;
    *gran = SIM_PAGE;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                            const CUmemAllocationProp *prop, unsigned long long flags)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!handle || !prop || flags || size == 0 || size % SIM_PAGE || prop->location.type != 1)
        return CUDA_ERROR_INVALID_VALUE;
    CUdevice dev = prop->location.id;
    if (simcu_gpu(dev) < 0)
        return CUDA_ERROR_INVALID_DEVICE;
    CUresult rc = simcu_charge(dev, (int64_t)size);
    if (rc != CUDA_SUCCESS)
        return rc;
    struct phys *p = calloc(1, sizeof *p);
    int fd = p ? simdevmem_fd(size, dev) : -1;
    if (fd < 0) {
        free(p);
        simcu_charge(dev, -(int64_t)size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *p = (struct phys){fd, size, dev, 0, 0, 0, false, false, *prop};
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)p;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    struct phys *p = (struct phys *)(uintptr_t)handle;
    if (!p || p->released)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mu);
    p->released = 1;
    phys_maybe_free(p);
    pthread_mutex_unlock(&mu);
    return CUDA_SUCCESS;
}

/* Only memory created exportable (requestedHandleTypes) can be exported,
 * as a descriptor the caller owns. */
EXPORT CUresult cuMemExportToShareableHandle(void *out, CUmemGenericAllocationHandle handle,
                                             int type, unsigned long long flags)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    struct phys *p = (struct phys *)(uintptr_t)handle;
    if (!out || !p || flags || type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
        !(p->prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
        return CUDA_ERROR_INVALID_VALUE;
    int fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&mu);
    p->shared = true;
    pthread_mutex_unlock(&mu);
    memcpy(out, &fd, sizeof fd);
    return CUDA_SUCCESS;
}

/* The caller keeps its descriptor; the handle is one more reference to the
 * exporter's memory, on the exporter's device. */
EXPORT CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle,
                                               void *os_handle, int type)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    int in = (int)(intptr_t)os_handle, dev = -1;
    char link[64], target[128] = "";
    snprintf(link, sizeof link, "/proc/self/fd/%d", in);
    ssize_t n = readlink(link, target, sizeof target - 1);
    struct stat st;
    if (!handle || type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || n <= 0 ||
        fstat(in, &st) < 0 || st.st_size <= 0 || st.st_size % SIM_PAGE ||
        sscanf(target, "/memfd:vram-sim-vmm-d%d", &dev) != 1 || simcu_gpu(dev) < 0)
        return CUDA_ERROR_INVALID_VALUE;
    struct phys *p = calloc(1, sizeof *p);
    int fd = fcntl(in, F_DUPFD_CLOEXEC, 0);
    if (!p || fd < 0) {
        free(p);
        if (fd >= 0)
            close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *p = (struct phys){fd, (size_t)st.st_size, dev, 0, 0, 1, true, false, {0}};
    p->prop.type = 1;
    p->prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    p->prop.location = (CUmemLocation){CU_MEM_LOCATION_TYPE_DEVICE, dev};
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)p;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
                                                       CUmemGenericAllocationHandle handle)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    struct phys *p = (struct phys *)(uintptr_t)handle;
    if (!prop || !p)
        return CUDA_ERROR_INVALID_VALUE;
    *prop = p->prop;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr addr,
                                    unsigned long long flags)
{
    (void)align;
    (void)flags;
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!ptr || size == 0 || size % SIM_PAGE)
        return CUDA_ERROR_INVALID_VALUE;
    void *p = mmap((void *)(uintptr_t)addr, size, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *ptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    simdevmem_unpark((void *)(uintptr_t)ptr, size);
    return munmap((void *)(uintptr_t)ptr, size) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                         CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    struct phys *p = (struct phys *)(uintptr_t)handle;
    if (!p || flags || size == 0 || size % SIM_PAGE || offset > p->size || size > p->size - offset)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mu);
    CUresult rc = CUDA_SUCCESS;
    if (nmaps == cap_maps) {
        size_t nc = cap_maps ? cap_maps * 2 : 64;
        struct mapping *nm = realloc(maps, nc * sizeof *nm);
        if (nm)
            maps = nm, cap_maps = nc;
        else
            rc = CUDA_ERROR_OUT_OF_MEMORY;
    }
    /* back where it was parked, its pages in place: no fault on first touch */
    bool placed = rc == CUDA_SUCCESS && offset == 0 && size == p->size &&
                  simdevmem_place(&p->fd, !p->used && !p->shared, p->dev, (void *)(uintptr_t)ptr, size);
    if (rc == CUDA_SUCCESS && !placed)
        simdevmem_unpark((void *)(uintptr_t)ptr, size);
    if (rc == CUDA_SUCCESS && !placed &&
        mmap((void *)(uintptr_t)ptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, p->fd,
             (off_t)offset) == MAP_FAILED)
        rc = CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS && simcu_track(ptr, size, 0, p->dev, SIMCU_MAPPED) < 0)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == CUDA_SUCCESS) {
        maps[nmaps++] = (struct mapping){ptr, size, offset, p};
        p->maps++;
        p->used = true;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

/* The range may cover several mappings, each whole (PyTorch unmaps a run
 * of its segment's pages at once); a range that cuts one is refused. */
EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    pthread_mutex_lock(&mu);
    size_t covered = 0;
    CUresult rc = CUDA_SUCCESS;
    for (size_t i = 0; i < nmaps; i++) {
        CUdeviceptr a = maps[i].ptr, b = a + maps[i].size;
        if (b <= ptr || a >= ptr + size)
            continue;
        if (a < ptr || b > ptr + size)
            rc = CUDA_ERROR_INVALID_VALUE;
        covered += maps[i].size;
    }
    if (covered != size)
        rc = CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; rc == CUDA_SUCCESS && i < nmaps;) {
        if (maps[i].ptr < ptr || maps[i].ptr >= ptr + size) {
            i++;
            continue;
        }
        struct phys *p = maps[i].phys;
        size_t sz, ch;
        CUdevice dev;
        simcu_untrack(maps[i].ptr, SIMCU_MAPPED, &sz, &ch, &dev);
        /* back to a reservation: the address range stays ours (parked, a
         * whole allocation keeps its pages there) */
        if (maps[i].offset != 0 || maps[i].size != p->size ||
            !simdevmem_park(p->fd, (void *)(uintptr_t)maps[i].ptr, maps[i].size))
            mmap((void *)(uintptr_t)maps[i].ptr, maps[i].size, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        maps[i] = maps[--nmaps];
        p->maps--;
        phys_maybe_free(p);
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

/* A mapping starts reachable from no device, its own included, as on a
 * GPU; each desc sets one device's access (0 none, 1 read, 3 read and
 * write), the others keep theirs. Every simulated GPU can reach every
 * other (an NVLink server). Host locations are refused: the simulation's
 * physical memory is always a device's. */
EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                               size_t count)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!desc || count == 0)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; i++) {
        if (desc[i].location.type != 1 ||
            (desc[i].flags != 0 && desc[i].flags != 1 && desc[i].flags != 3))
            return CUDA_ERROR_INVALID_VALUE;
        if (simcu_gpu(desc[i].location.id) < 0)
            return CUDA_ERROR_INVALID_DEVICE;
    }
    return simcu_grant(ptr, size, desc, count) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static size_t format_bytes(int format)
{
    switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
        return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
        return 2;
    default:
        return 4;
    }
}

static CUresult array_create(CUarray *out, size_t w, size_t h, size_t d, int format,
                             unsigned channels)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    CUdevice dev = simcu_device();
    if (dev < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!out || w == 0 || (channels != 1 && channels != 2 && channels != 4))
        return CUDA_ERROR_INVALID_VALUE;
    h = h ? h : 1;
    d = d ? d : 1;
    size_t el = format_bytes(format) * channels;
    if (h > SIZE_MAX / w || d > SIZE_MAX / (w * h) || el > SIZE_MAX / (w * h * d))
        return CUDA_ERROR_OUT_OF_MEMORY;
    size_t charged = simcu_round(w * h * d * el);
    struct array *a = calloc(1, sizeof *a);
    if (!a)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult rc = simcu_charge(dev, (int64_t)charged);
    if (rc != CUDA_SUCCESS) {
        free(a);
        return rc;
    }
    *a = (struct array){charged, dev};
    *out = (CUarray)a;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuArrayCreate_v2(CUarray *out, const CUDA_ARRAY_DESCRIPTOR *desc)
{
    if (!desc)
        return CUDA_ERROR_INVALID_VALUE;
    return array_create(out, desc->Width, desc->Height, 1, desc->Format, desc->NumChannels);
}

EXPORT CUresult cuArray3DCreate_v2(CUarray *out, const CUDA_ARRAY3D_DESCRIPTOR *desc)
{
    if (!desc)
        return CUDA_ERROR_INVALID_VALUE;
    return array_create(out, desc->Width, desc->Height, desc->Depth, desc->Format,
                        desc->NumChannels);
}

EXPORT CUresult cuArrayDestroy(CUarray arr)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    struct array *a = (struct array *)arr;
    if (!a)
        return CUDA_ERROR_INVALID_HANDLE;
    simcu_charge(a->dev, -(int64_t)a->charged);
    free(a);
    return CUDA_SUCCESS;
}
