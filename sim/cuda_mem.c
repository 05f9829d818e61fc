/* cuda_mem: device memory in the simulated libcuda.so.1.
 *
 * Device memory is host memory, mapped lazily (pages are real only once
 * written, so a test can "allocate" 10 GiB of a simulated card on a small
 * machine) and kept once freed, as a GPU's is (sim/devmem.c), charged to
 * the shared ledger in the driver's 2 MiB pages. Every range that copies may touch is tracked, so a copy outside any allocation
 * fails as it would on a GPU instead of scribbling over the test, and so
 * does a copy by a device that may not reach the memory (simcu_reach). */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim/cuda_internal.h"
#include "sim/devmem.h"

#define EXPORT SIM_EXPORT

struct range {
    CUdeviceptr ptr;
    size_t size, charged;
    CUdevice dev;
    enum simcu_kind kind;
    uint64_t readers, writers; /* VMM mappings: the devices cuMemSetAccess named */
    int fd;                    /* shared with other processes (simcu_share): its memfd */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct range *ranges;
static size_t nranges, cap_ranges;

int simcu_track(CUdeviceptr p, size_t size, size_t charged, CUdevice dev, enum simcu_kind kind)
{
    pthread_mutex_lock(&mu);
    int rc = 0;
    if (nranges == cap_ranges) {
        size_t nc = cap_ranges ? cap_ranges * 2 : 64;
        struct range *nr = realloc(ranges, nc * sizeof *nr);
        if (nr)
            ranges = nr, cap_ranges = nc;
        else
            rc = -1;
    }
    if (rc == 0)
        ranges[nranges++] = (struct range){p, size, charged, dev, kind, 0, 0, -1};
    pthread_mutex_unlock(&mu);
    return rc;
}

int simcu_untrack(CUdeviceptr p, enum simcu_kind kind, size_t *size, size_t *charged, CUdevice *dev)
{
    pthread_mutex_lock(&mu);
    int rc = -1;
    for (size_t i = 0; i < nranges; i++) {
        if (ranges[i].ptr != p || ranges[i].kind != kind)
            continue;
        *size = ranges[i].size;
        *charged = ranges[i].charged;
        *dev = ranges[i].dev;
        ranges[i] = ranges[--nranges];
        rc = 0;
        break;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

/* The tracked range holding p, or NULL. Lock held. */
static struct range *range_at(CUdeviceptr p)
{
    for (size_t i = 0; i < nranges; i++)
        if (p >= ranges[i].ptr && p - ranges[i].ptr < ranges[i].size)
            return &ranges[i];
    return NULL;
}

/* Whether device me may touch r: its own device's memory of the legacy
 * kind, another device's once a context of me enabled peer access to it
 * (cuCtxEnablePeerAccess covers that kind only), managed memory from
 * anywhere, and a VMM mapping only from the devices cuMemSetAccess gave
 * it to, whoever made it. */
static bool reaches(const struct range *r, CUdevice me, bool write)
{
    uint64_t bit = 1ULL << me;
    switch (r->kind) {
    case SIMCU_MAPPED:
        return ((write ? r->writers : r->readers) & bit) != 0;
    case SIMCU_MANAGED:
        return true;
    default:
        return r->dev == me || simcu_peer_reaches(me, r->dev);
    }
}

/* A span may cross adjacent ranges, as on a GPU (PyTorch grants access
 * to a run of its segment's pages in one call, and copies across them). A
 * copy here is the current device's own access, like a kernel's loads and
 * stores: the real driver would stage a copy of legacy memory between
 * devices without peer access through the host, which the simulation
 * refuses instead, so that a test sees what a kernel would fault on. */
CUresult simcu_reach(CUdeviceptr p, size_t n, bool write)
{
    if (n == 0)
        return CUDA_SUCCESS;
    CUdevice me = simcu_device();
    if (me < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&mu);
    CUresult rc = CUDA_SUCCESS;
    while (rc == CUDA_SUCCESS && n > 0) {
        const struct range *r = range_at(p);
        if (!r) {
            rc = CUDA_ERROR_INVALID_VALUE;
            break;
        }
        size_t in = r->size - (size_t)(p - r->ptr);
        size_t step = in < n ? in : n;
        if (!reaches(r, me, write))
            rc = CUDA_ERROR_ILLEGAL_ADDRESS;
        p += step;
        n -= step;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

/* The simulation keeps access per mapping: a span that cuts one, or
 * covers anything but mappings, is refused (nothing that runs here grants
 * part of a mapping; the real driver would take it). */
int simcu_grant(CUdeviceptr p, size_t n, const CUmemAccessDesc *desc, size_t count)
{
    pthread_mutex_lock(&mu);
    int rc = n ? 0 : -1;
    for (int apply = 0; rc == 0 && apply < 2; apply++)
        for (CUdeviceptr at = p, end = p + n; rc == 0 && at < end;) {
            struct range *r = range_at(at);
            if (!r || r->kind != SIMCU_MAPPED || r->ptr != at || r->size > end - at) {
                rc = -1;
                break;
            }
            for (size_t i = 0; apply && i < count; i++) {
                uint64_t bit = 1ULL << desc[i].location.id;
                r->readers = desc[i].flags & 1 ? r->readers | bit : r->readers & ~bit;
                r->writers = desc[i].flags & 2 ? r->writers | bit : r->writers & ~bit;
            }
            at += r->size;
        }
    pthread_mutex_unlock(&mu);
    return rc;
}

CUresult simcu_linear_alloc(CUdeviceptr *dptr, size_t size, CUdevice dev, enum simcu_kind kind)
{
    size_t charged = simcu_round(size);
    CUresult rc = simcu_charge(dev, (int64_t)charged);
    if (rc != CUDA_SUCCESS)
        return rc;
    void *p = simdevmem_map(charged);
    if (!p || simcu_track((CUdeviceptr)(uintptr_t)p, size, charged, dev, kind)) {
        if (p)
            simdevmem_unmap(p, charged);
        simcu_charge(dev, -(int64_t)charged);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *dptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

static CUresult linear_alloc(CUdeviceptr *dptr, size_t size, enum simcu_kind kind)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    CUdevice dev = simcu_device();
    if (dev < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!dptr || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    return simcu_linear_alloc(dptr, size, dev, kind);
}

int simcu_linear_release(CUdeviceptr ptr, enum simcu_kind kind)
{
    pthread_mutex_lock(&mu);
    struct range r = {0};
    int rc = -1;
    for (size_t i = 0; i < nranges; i++)
        if (ranges[i].ptr == ptr && ranges[i].kind == kind) {
            r = ranges[i];
            ranges[i] = ranges[--nranges];
            rc = 0;
            break;
        }
    pthread_mutex_unlock(&mu);
    if (rc < 0)
        return -1;
    /* memory shared with another process is never handed out again: its
     * pages are that process's to see until it closes them */
    if (r.fd >= 0) {
        munmap((void *)(uintptr_t)ptr, r.charged);
        close(r.fd);
    } else {
        simdevmem_unmap((void *)(uintptr_t)ptr, r.charged);
    }
    simcu_charge(r.dev, -(int64_t)r.charged);
    return 0;
}

/* The memory of a live allocation starting at p, made shareable with other
 * processes: its pages move into a memfd mapped where they were (the
 * driver's memory is always shareable; the simulation's becomes so when
 * first exported). Its descriptor, size and device out; -1 if p starts no
 * cuMemAlloc allocation. */
int simcu_share(CUdeviceptr p, int *fd, size_t *size, CUdevice *dev)
{
    pthread_mutex_lock(&mu);
    int rc = -1;
    for (size_t i = 0; i < nranges; i++) {
        struct range *r = &ranges[i];
        if (r->ptr != p || r->kind != SIMCU_LINEAR)
            continue;
        if (r->fd < 0) {
            int f = memfd_create("vram-sim-ipc", MFD_CLOEXEC);
            void *at = (void *)(uintptr_t)r->ptr;
            if (f < 0 || ftruncate(f, (off_t)r->size) < 0 ||
                pwrite(f, at, r->size, 0) != (ssize_t)r->size ||
                mmap(at, r->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, f, 0) ==
                    MAP_FAILED) {
                if (f >= 0)
                    close(f);
                break;
            }
            r->fd = f;
        }
        *fd = r->fd;
        *size = r->size;
        *dev = r->dev;
        rc = 0;
        break;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size)
{
    return linear_alloc(dptr, size, SIMCU_LINEAR);
}

/* cuMemFree takes stream-ordered memory too (the driver waits for it) */
EXPORT CUresult cuMemFree_v2(CUdeviceptr ptr)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (ptr == 0 || simcu_pool_free(ptr) == 0)
        return CUDA_SUCCESS;
    if (simcu_linear_release(ptr, SIMCU_LINEAR) == 0 ||
        simcu_linear_release(ptr, SIMCU_MANAGED) == 0)
        return CUDA_SUCCESS;
    return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
                                   unsigned elem)
{
    if (!pitch || (elem != 4 && elem != 8 && elem != 16) || width == 0 || height == 0)
        return CUDA_ERROR_INVALID_VALUE;
    /* rows padded to 512 bytes, as on current GPUs */
    size_t p = (width + 511) & ~(size_t)511;
    if (height > SIZE_MAX / p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult rc = linear_alloc(dptr, p * height, SIMCU_LINEAR);
    if (rc == CUDA_SUCCESS)
        *pitch = p;
    return rc;
}

EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t size, unsigned flags)
{
    if (flags != 1 && flags != 2) /* CU_MEM_ATTACH_GLOBAL, CU_MEM_ATTACH_HOST */
        return CUDA_ERROR_INVALID_VALUE;
    return linear_alloc(dptr, size, SIMCU_MANAGED);
}

EXPORT CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
    struct sim *s = simcu_ready();
    if (!s)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUdevice dev = simcu_device();
    if (dev < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!free_b || !total)
        return CUDA_ERROR_INVALID_VALUE;
    sim_state_lock(&s->state);
    unsigned gi = sim_state_actual(&s->state, (unsigned)simcu_gpu(dev));
    const struct sim_gpu_def *g = &s->machine.gpus[gi];
    uint64_t used = g->reserved + sim_used_locked(s, gi);
    sim_state_unlock(&s->state);
    *total = g->memory;
    *free_b = used < g->memory ? g->memory - used : 0;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    pthread_mutex_lock(&mu);
    CUresult rc = CUDA_ERROR_NOT_FOUND;
    for (size_t i = 0; i < nranges; i++) {
        if (p < ranges[i].ptr || p - ranges[i].ptr >= ranges[i].size)
            continue;
        if (base)
            *base = ranges[i].ptr;
        if (size)
            *size = ranges[i].size;
        rc = CUDA_SUCCESS;
        break;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!src)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = simcu_reach(dst, n, true);
    if (rc != CUDA_SUCCESS)
        return rc;
    simcu_gate();
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    memcpy((void *)(uintptr_t)dst, src, n);
    simcu_link(&t0, n);
    simcu_busy();
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!dst)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = simcu_reach(src, n, false);
    if (rc != CUDA_SUCCESS)
        return rc;
    simcu_gate();
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    memcpy(dst, (const void *)(uintptr_t)src, n);
    simcu_link(&t0, n);
    simcu_busy();
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = simcu_reach(dst, n, true);
    if (rc == CUDA_SUCCESS)
        rc = simcu_reach(src, n, false);
    if (rc != CUDA_SUCCESS)
        return rc;
    simcu_gate();
    memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
    simcu_busy();
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = simcu_reach(dst, n, true);
    if (rc != CUDA_SUCCESS)
        return rc;
    simcu_gate();
    memset((void *)(uintptr_t)dst, v, n);
    simcu_busy();
    return CUDA_SUCCESS;
}
