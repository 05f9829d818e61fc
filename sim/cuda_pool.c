/* cuda_pool: stream-ordered allocation in the simulated libcuda.so.1: the
 * default and user-created pools of each device (cuMemPoolCreate), the
 * device's current pool, cuMemAllocAsync / cuMemAllocFromPoolAsync /
 * cuMemFreeAsync, trimming and the pools' attributes.
 *
 * As the driver documents it: a pool keeps what is freed into it
 * (reserved, still the process's GPU memory) and hands it out again; on
 * the next synchronize (stream, event, context) it gives back to the
 * driver what it holds past its release threshold (0 by default), and
 * cuMemPoolTrimTo gives back what it can down to a figure. The simulation
 * runs every stream at once, so a free is complete when it returns and any
 * stream may reuse it. Each allocation is its own range, charged in the
 * driver's 2 MiB pages; a freed one is reused for a request no smaller
 * than half of it. On a capturing stream the allocation and the free are
 * the graph's (cuda_graph.c). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cuda_internal.h"

#define EXPORT SIM_EXPORT

struct block {
    CUdeviceptr ptr;
    size_t size;
    struct simpool *pool;
    bool free;
};

struct simpool {
    CUdevice dev;
    CUmemPoolProps props;
    bool is_default, destroyed;
    int reuse[4]; /* the three reuse flags, by attribute number */
    uint64_t threshold, used, reserved, used_high, reserved_high;
    uint64_t readers; /* devices given access (cuMemPoolSetAccess) */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct block *blocks;
static size_t nblocks, cap_blocks;
static struct simpool defaults[SIM_MAX_GPUS];
static struct simpool *current[SIM_MAX_GPUS];
static struct simpool *made[256]; /* the pools cuMemPoolCreate made, live */
static unsigned nmade;

static void pool_init(struct simpool *p, CUdevice dev)
{
    memset(p, 0, sizeof *p);
    p->dev = dev;
    p->props.allocType = 1;
    p->props.location = (CUmemLocation){CU_MEM_LOCATION_TYPE_DEVICE, dev};
    p->reuse[1] = p->reuse[2] = p->reuse[3] = 1;
}

/* The default pool of dev (made on first use). Lock held. */
static struct simpool *default_of(CUdevice dev)
{
    struct simpool *p = &defaults[dev];
    if (!p->is_default) {
        pool_init(p, dev);
        p->is_default = true;
    }
    return p;
}

/* A pool handle the simulation gave out, or NULL. Lock held. */
static struct simpool *pool_of(CUmemoryPool h)
{
    struct simpool *p = (struct simpool *)h;
    for (int d = 0; p && d < SIM_MAX_GPUS; d++)
        if (p == &defaults[d] && p->is_default)
            return p;
    for (unsigned i = 0; p && i < nmade; i++)
        if (made[i] == p && !p->destroyed)
            return p;
    return NULL;
}

static void note_high(struct simpool *p)
{
    if (p->used > p->used_high)
        p->used_high = p->used;
    if (p->reserved > p->reserved_high)
        p->reserved_high = p->reserved;
}

/* Gives a free block's memory back to the driver. Lock held. */
static void release_block(size_t i)
{
    struct block b = blocks[i];
    blocks[i] = blocks[--nblocks];
    b.pool->reserved -= simcu_round(b.size);
    simcu_linear_release(b.ptr, SIMCU_POOL);
}

/* Frees a pool made by cuMemPoolCreate once destroyed and empty. Lock held. */
static void maybe_forget(struct simpool *p)
{
    if (!p->destroyed || p->reserved)
        return;
    for (unsigned i = 0; i < nmade; i++)
        if (made[i] == p) {
            made[i] = made[--nmade];
            free(p);
            return;
        }
}

/* Down to keep bytes reserved (or as far as free blocks allow). Lock held. */
static void trim(struct simpool *p, uint64_t keep)
{
    for (size_t i = nblocks; i-- > 0 && p->reserved > keep;)
        if (blocks[i].pool == p && blocks[i].free)
            release_block(i);
}

void simcu_pools_settle(void)
{
    pthread_mutex_lock(&mu);
    for (int d = 0; d < SIM_MAX_GPUS; d++)
        if (defaults[d].is_default)
            trim(&defaults[d], defaults[d].threshold);
    for (unsigned i = nmade; i-- > 0;) {
        trim(made[i], made[i]->destroyed ? 0 : made[i]->threshold);
        maybe_forget(made[i]);
    }
    pthread_mutex_unlock(&mu);
}

static CUresult pool_alloc(CUdeviceptr *dptr, size_t size, struct simpool *p)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < nblocks; i++)
        if (blocks[i].pool == p && blocks[i].free && blocks[i].size >= size &&
            blocks[i].size / 2 <= size && (best == SIZE_MAX || blocks[i].size < blocks[best].size))
            best = i;
    if (best != SIZE_MAX) {
        blocks[best].free = false;
        p->used += simcu_round(blocks[best].size);
        note_high(p);
        *dptr = blocks[best].ptr;
        return CUDA_SUCCESS;
    }
    if (nblocks == cap_blocks) {
        size_t nc = cap_blocks ? cap_blocks * 2 : 64;
        struct block *nb = realloc(blocks, nc * sizeof *nb);
        if (!nb)
            return CUDA_ERROR_OUT_OF_MEMORY;
        blocks = nb;
        cap_blocks = nc;
    }
    CUresult rc = simcu_linear_alloc(dptr, size, p->dev, SIMCU_POOL);
    if (rc == CUDA_ERROR_OUT_OF_MEMORY) { /* what the pool holds unused goes first */
        trim(p, 0);
        rc = simcu_linear_alloc(dptr, size, p->dev, SIMCU_POOL);
    }
    if (rc != CUDA_SUCCESS)
        return rc;
    blocks[nblocks++] = (struct block){*dptr, size, p, false};
    p->used += simcu_round(size);
    p->reserved += simcu_round(size);
    note_high(p);
    return CUDA_SUCCESS;
}

static CUresult alloc_async(CUdeviceptr *dptr, size_t size, CUmemoryPool h, bool from_pool,
                            CUstream stream)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    CUdevice dev = simcu_device();
    if (dev < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!dptr || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mu);
    struct simpool *p = from_pool ? pool_of(h) : current[dev] ? current[dev] : default_of(dev);
    pthread_mutex_unlock(&mu);
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    int cap = simcu_capturing(stream);
    if (cap < 0)
        return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    if (cap) /* an allocation node: the graph's memory, not the pool's */
        return simcu_graph_alloc(dptr, size, p->dev, stream);
    pthread_mutex_lock(&mu);
    CUresult rc = pool_alloc(dptr, size, p);
    pthread_mutex_unlock(&mu);
    return rc;
}

int simcu_pool_free(CUdeviceptr ptr)
{
    int rc = -1;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nblocks; i++)
        if (blocks[i].ptr == ptr && !blocks[i].free) {
            blocks[i].free = true;
            blocks[i].pool->used -= simcu_round(blocks[i].size);
            if (blocks[i].pool->destroyed)
                release_block(i);
            rc = 0;
            break;
        }
    pthread_mutex_unlock(&mu);
    return rc;
}

static CUresult free_async(CUdeviceptr ptr, CUstream stream)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    int cap = simcu_capturing(stream);
    if (cap < 0)
        return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    if (cap) /* a free node: only for the address of a graph allocation */
        return simcu_graph_free(ptr, stream);
    if (simcu_graph_free(ptr, NULL) == CUDA_SUCCESS || simcu_pool_free(ptr) == 0)
        return CUDA_SUCCESS;
    /* the driver lets a stream-ordered free take cuMemAlloc's memory too */
    return simcu_linear_release(ptr, SIMCU_LINEAR) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t size, CUstream stream)
{
    return alloc_async(dptr, size, NULL, false, stream);
}

EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t size, CUstream stream)
{
    return alloc_async(dptr, size, NULL, false, stream);
}

EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t size, CUmemoryPool pool,
                                        CUstream stream)
{
    return alloc_async(dptr, size, pool, true, stream);
}

EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t size, CUmemoryPool pool,
                                             CUstream stream)
{
    return alloc_async(dptr, size, pool, true, stream);
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr ptr, CUstream stream)
{
    return free_async(ptr, stream);
}

EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr ptr, CUstream stream)
{
    return free_async(ptr, stream);
}

EXPORT CUresult cuMemPoolCreate(CUmemoryPool *out, const CUmemPoolProps *props)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!out || !props || props->allocType != 1 ||
        props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (simcu_gpu(props->location.id) < 0)
        return CUDA_ERROR_INVALID_DEVICE;
    struct simpool *p = malloc(sizeof *p);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pool_init(p, props->location.id);
    p->props = *props;
    pthread_mutex_lock(&mu);
    CUresult rc = CUDA_SUCCESS;
    if (nmade < sizeof made / sizeof made[0])
        made[nmade++] = p;
    else
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_unlock(&mu);
    if (rc != CUDA_SUCCESS)
        free(p);
    else
        *out = (CUmemoryPool)p;
    return rc;
}

/* What is still allocated from a destroyed pool stays valid; the pool goes
 * once it is all freed. A device's default pool cannot be destroyed. */
EXPORT CUresult cuMemPoolDestroy(CUmemoryPool h)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    pthread_mutex_lock(&mu);
    struct simpool *p = pool_of(h);
    CUresult rc = !p || p->is_default ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (rc == CUDA_SUCCESS) {
        for (int d = 0; d < SIM_MAX_GPUS; d++)
            if (current[d] == p)
                current[d] = NULL;
        trim(p, 0);
        p->destroyed = true;
        maybe_forget(p);
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool h, size_t keep)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    pthread_mutex_lock(&mu);
    struct simpool *p = pool_of(h);
    if (p)
        trim(p, keep);
    pthread_mutex_unlock(&mu);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool h, int attr, void *value)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mu);
    struct simpool *p = pool_of(h);
    CUresult rc = p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    uint64_t v = 0;
    if (p && attr >= CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
        memcpy(&v, value, sizeof v);
    switch (p ? attr : -1) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        memcpy(&p->reuse[attr], value, sizeof(int));
        break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
        p->threshold = v;
        break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: /* only a reset to 0 */
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        if (v)
            rc = CUDA_ERROR_INVALID_VALUE;
        else if (attr == CU_MEMPOOL_ATTR_USED_MEM_HIGH)
            p->used_high = p->used;
        else
            p->reserved_high = p->reserved;
        break;
    default:
        rc = CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool h, int attr, void *value)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mu);
    struct simpool *p = pool_of(h);
    CUresult rc = p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    uint64_t v = 0;
    switch (p ? attr : -1) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        memcpy(value, &p->reuse[attr], sizeof(int));
        break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
        v = p->threshold;
        break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
        v = p->reserved;
        break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
        v = p->reserved_high;
        break;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
        v = p->used;
        break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        v = p->used_high;
        break;
    default:
        rc = CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_unlock(&mu);
    if (rc == CUDA_SUCCESS && attr >= CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
        memcpy(value, &v, sizeof v);
    return rc;
}

/* Access for other devices, kept per pool; a pool's memory is always
 * reachable from its own device, which cannot be taken away. */
EXPORT CUresult cuMemPoolSetAccess(CUmemoryPool h, const CUmemAccessDesc *desc, size_t count)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    pthread_mutex_lock(&mu);
    struct simpool *p = pool_of(h);
    CUresult rc = p && (desc || !count) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; rc == CUDA_SUCCESS && i < count; i++)
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
            simcu_gpu(desc[i].location.id) < 0 ||
            (desc[i].location.id == p->dev && desc[i].flags != 3))
            rc = CUDA_ERROR_INVALID_DEVICE;
    for (size_t i = 0; rc == CUDA_SUCCESS && i < count; i++) {
        uint64_t bit = 1ULL << desc[i].location.id;
        p->readers = desc[i].flags ? p->readers | bit : p->readers & ~bit;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

EXPORT CUresult cuMemPoolGetAccess(int *flags, CUmemoryPool h, CUmemLocation *loc)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!flags || !loc)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mu);
    struct simpool *p = pool_of(h);
    if (p)
        *flags = loc->id == p->dev ? 3 : (p->readers >> loc->id & 1) ? 3 : 0;
    pthread_mutex_unlock(&mu);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* dev's default pool, or (current) the one cuDeviceSetMemPool chose */
static CUresult device_pool(CUmemoryPool *out, CUdevice dev, bool current_one)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    if (simcu_gpu(dev) < 0)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&mu);
    *out = (CUmemoryPool)(current_one && current[dev] ? current[dev] : default_of(dev));
    pthread_mutex_unlock(&mu);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *out, CUdevice dev)
{
    return device_pool(out, dev, false);
}

EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool *out, CUdevice dev)
{
    return device_pool(out, dev, true);
}

EXPORT CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool h)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (simcu_gpu(dev) < 0)
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&mu);
    struct simpool *p = pool_of(h);
    CUresult rc = p && p->dev == dev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        current[dev] = p;
    pthread_mutex_unlock(&mu);
    return rc;
}
