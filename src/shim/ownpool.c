/* ownpool: libvramcap's own memory pools (see ownpool.h for why): which
 * pool a handle is, each device's default and current pool, the pools'
 * attributes and access, and allocation and free in stream order (a
 * pool's memory and its rules of reuse are arena.c's; the event each
 * free records, freeevent.c's; the live blocks by address, addrmap.c's).
 * In libvramcap, "pool" alone is a memory pool; the pinned host memory a
 * suspend copies into is the host pool (hostmem.c).
 *
 * A synchronize is when, as the driver does, a pool gives back to the
 * driver whole free chunks past its release threshold (0 by default);
 * cuMemPoolTrimTo does the same down to its figure. While a stream
 * captures a graph its allocations are allocation nodes, the driver's
 * (graph.c deals with them at a suspend); a pool made exportable to other
 * processes is the driver's too. One lock guards it all; it is taken
 * before the swap table's (a chunk is made under it), and no suspend can
 * find it held: every entry point here waits at the gate. */
#include "shim/ownpool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "shim/addrmap.h"
#include "shim/arena.h"
#include "shim/driver.h"
#include "shim/freeevent.h"
#include "shim/shim.h"

#define MAX_POOLS 256

struct ownpool {
    struct arena a;      /* its memory */
    CUmemoryPool handle; /* the program's: an empty pool of the driver's, so that
                          * any check the runtime makes of it holds */
    CUmemPoolProps props;
    bool is_default, destroyed;
    int reuse[4]; /* by attribute number */
    uint64_t threshold;
};

/* The pool whose memory a block is */
#define POOL_OF(b) ((struct ownpool *)((char *)(b)->chunk->arena - offsetof(struct ownpool, a)))

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool any; /* a pool exists: synchronizes have work here */
static struct ownpool *pools[MAX_POOLS];
static unsigned npools;
static struct ownpool *defaults[SHIM_MAX_DEVICES];
static CUmemoryPool current[SHIM_MAX_DEVICES]; /* NULL: the default */
static bool current_driver[SHIM_MAX_DEVICES];  /* current is the driver's */
static struct addrmap live;                    /* the blocks handed out, by address */

static bool special(CUstream s)
{
    return s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD;
}

static void forget(struct ownpool *p)
{
    for (unsigned i = 0; i < npools; i++)
        if (pools[i] == p) {
            pools[i] = pools[--npools];
            break;
        }
    free(p);
}

/* A destroyed pool goes once nothing of it is left. Lock held. */
static bool maybe_forget(struct ownpool *p)
{
    if (!p->destroyed)
        return false;
    arena_shrink(&p->a, 0);
    if (p->a.chunks)
        return false;
    forget(p);
    return true;
}

static struct ownpool *pool_new(CUmemoryPool handle, CUdevice dev, const CUmemPoolProps *props)
{
    if (npools == MAX_POOLS)
        return NULL;
    struct ownpool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->handle = handle;
    p->a.dev = dev;
    p->a.max = props->maxSize;
    p->a.waits = true;
    p->props = *props;
    p->reuse[1] = p->reuse[2] = p->reuse[3] = 1;
    pools[npools++] = p;
    atomic_store(&any, true);
    return p;
}

/* Ours, or NULL. Lock held. */
static struct ownpool *pool_of(CUmemoryPool h)
{
    for (unsigned i = 0; h && i < npools; i++)
        if (pools[i]->handle == h && !pools[i]->destroyed)
            return pools[i];
    return NULL;
}

static struct ownpool *default_of(CUdevice dev)
{
    if (dev < 0 || dev >= SHIM_MAX_DEVICES)
        return NULL;
    CUmemoryPool h = NULL;
    if (!defaults[dev] && real_cuDeviceGetDefaultMemPool &&
        real_cuDeviceGetDefaultMemPool(&h, dev) == CUDA_SUCCESS) {
        CUmemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = 1;
        props.location = (CUmemLocation){CU_MEM_LOCATION_TYPE_DEVICE, dev};
        if ((defaults[dev] = pool_new(h, dev, &props)))
            defaults[dev]->is_default = true;
    }
    return defaults[dev];
}

/* size bytes of p for stream: from what it holds, or a new chunk; when the
 * driver is out of memory, what the pools on that device hold unused goes
 * back first. Lock held. */
static struct arena_block *take(struct ownpool *p, uint64_t size, CUstream stream)
{
    struct arena_block *b = arena_alloc(&p->a, size, stream);
    if (b)
        return b;
    CUresult rc = arena_grow(&p->a, size);
    for (unsigned i = 0; rc == CUDA_ERROR_OUT_OF_MEMORY && i <= npools; i++) {
        struct ownpool *q = i < npools ? pools[i] : p; /* p itself last */
        if (q->a.dev == p->a.dev && (q != p || i == npools))
            arena_shrink(&q->a, 0);
        if (i == npools)
            rc = arena_grow(&p->a, size);
    }
    return rc == CUDA_SUCCESS ? arena_alloc(&p->a, size, stream) : NULL;
}

/* Whether stream is capturing a graph (or may not be used: then the
 * driver answers). */
static bool capturing(CUstream s)
{
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    return real_cuStreamIsCapturing && (real_cuStreamIsCapturing(s, &st) != CUDA_SUCCESS ||
                                        st != CU_STREAM_CAPTURE_STATUS_NONE);
}

/* The device a stream belongs to (the current context's for the special
 * handles, or when the driver cannot say). Never asked of a capturing
 * stream: the driver forbids cuStreamGetDevice there, and the program's
 * capture would be lost (PyTorch's backend:cudaMallocAsync under
 * torch.cuda.graph, on the H200); a capture runs in its context anyway. */
static CUdevice stream_device(CUstream s, bool capture)
{
    CUdevice d = -1;
    if (special(s) || capture || !real_cuStreamGetDevice ||
        real_cuStreamGetDevice(s, &d) != CUDA_SUCCESS)
        d = shim_device_now();
    return d;
}

static CUresult driver_alloc(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, bool has_pool,
                             CUstream stream, bool ptsz)
{
    if (has_pool)
        return ptsz ? real_cuMemAllocFromPoolAsync_ptsz(dptr, size, pool, stream)
                    : real_cuMemAllocFromPoolAsync(dptr, size, pool, stream);
    return ptsz ? real_cuMemAllocAsync_ptsz(dptr, size, stream)
                : real_cuMemAllocAsync(dptr, size, stream);
}

CUresult ownpool_alloc(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, bool has_pool,
                       CUstream stream, bool ptsz, enum allocs_kind *kind)
{
    *kind = ALLOCS_ASYNC;
    if (ptsz && stream == NULL)
        stream = CU_STREAM_PER_THREAD;
    /* asked once, and only where it is needed: to name the stream's
     * device safely, or (below) for a pool of ours */
    bool named = has_pool, capture = !named && capturing(stream);
    CUdevice dev = named ? -1 : stream_device(stream, capture);
    pthread_mutex_lock(&mu);
    struct ownpool *p = has_pool ? pool_of(pool) : NULL;
    if (!has_pool && dev >= 0 && dev < SHIM_MAX_DEVICES) {
        if (current_driver[dev]) { /* a pool of the driver's the program chose */
            pool = current[dev];
            has_pool = true;
        } else {
            p = current[dev] ? pool_of(current[dev]) : default_of(dev);
        }
    }
    pthread_mutex_unlock(&mu);
    if (!p) /* the driver's pool, or none: the driver answers */
        return driver_alloc(dptr, size, pool, has_pool, stream, ptsz);
    if (!dptr)
        return CUDA_ERROR_INVALID_VALUE;
    if (named)
        capture = capturing(stream);
    if (capture) {
        /* an allocation node: graph memory, the driver's (with the
         * properties of the driver's pool behind the handle) */
        *kind = ALLOCS_GRAPH;
        return driver_alloc(dptr, size, p->handle, true, stream, ptsz);
    }
    if (size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t want = ((uint64_t)size + ARENA_ALIGN - 1) & ~(ARENA_ALIGN - 1);
    if (want < size)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&mu);
    CUresult rc = CUDA_ERROR_OUT_OF_MEMORY;
    p->a.waits = p->reuse[CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES] != 0;
    struct arena_block *b = take(p, want, stream);
    if (b && addrmap_put(&live, b->va, b) < 0) /* cannot be found again: not handed out */
        arena_free(&p->a, b, NULL, NULL);
    else if (b) {
        *dptr = b->va;
        *kind = ALLOCS_OWNPOOL;
        rc = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

/* Back to its pool, tagged with stream and the event of the free (NULL: known
 * done). Lock held; b already out of the live table. */
static void give_back(struct arena_block *b, CUstream stream, struct freeevent *event)
{
    struct ownpool *p = POOL_OF(b);
    arena_free(&p->a, b, stream, event);
    if (p->destroyed)
        maybe_forget(p);
}

CUresult ownpool_free(CUdeviceptr ptr, CUstream stream, bool ptsz)
{
    if (ptsz && stream == NULL)
        stream = CU_STREAM_PER_THREAD;
    pthread_mutex_lock(&mu);
    struct arena_block *b = addrmap_get(&live, ptr, 0);
    /* during a capture a free is a free node, for graph memory only: the
     * driver says no to ours as it would to its own pool's */
    if (b && !capturing(stream)) {
        addrmap_get(&live, ptr, 1);
        struct freeevent *s = freeevent_get();
        if (s && real_cuEventRecord(s->ev, stream) != CUDA_SUCCESS) {
            freeevent_put(s);
            s = NULL;
        }
        if (!s) /* no event to follow: the free is done once the stream is */
            real_cuStreamSynchronize(stream);
        give_back(b, stream, s);
        pthread_mutex_unlock(&mu);
        return CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&mu);
    return ptsz ? real_cuMemFreeAsync_ptsz(ptr, stream) : real_cuMemFreeAsync(ptr, stream);
}

int ownpool_free_now(CUdeviceptr ptr, CUresult *rc)
{
    pthread_mutex_lock(&mu);
    struct arena_block *b = addrmap_get(&live, ptr, 1);
    if (b) {
        /* the driver's cuMemFree of pool memory waits for the work before */
        *rc = real_cuCtxSynchronize();
        give_back(b, NULL, NULL);
    }
    pthread_mutex_unlock(&mu);
    return b != NULL;
}

bool ownpool_ours(CUmemoryPool h)
{
    pthread_mutex_lock(&mu);
    bool r = pool_of(h) != NULL;
    pthread_mutex_unlock(&mu);
    return r;
}

bool ownpool_has(CUdeviceptr ptr)
{
    pthread_mutex_lock(&mu);
    bool r = addrmap_get(&live, ptr, 0) != NULL;
    pthread_mutex_unlock(&mu);
    return r;
}

CUresult ownpool_create(CUmemoryPool *out, const CUmemPoolProps *props)
{
    int n = 0;
    if (!out || !props || props->allocType != 1 ||
        props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (!real_cuDeviceGetCount || real_cuDeviceGetCount(&n) != CUDA_SUCCESS ||
        props->location.id < 0 || props->location.id >= n || props->location.id >= SHIM_MAX_DEVICES)
        return CUDA_ERROR_INVALID_DEVICE;
    CUmemoryPool h = NULL;
    CUresult rc = real_cuMemPoolCreate(&h, props);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&mu);
    struct ownpool *p = pool_new(h, props->location.id, props);
    pthread_mutex_unlock(&mu);
    if (!p) {
        real_cuMemPoolDestroy(h);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *out = h;
    return CUDA_SUCCESS;
}

CUresult ownpool_destroy(CUmemoryPool h)
{
    pthread_mutex_lock(&mu);
    struct ownpool *p = pool_of(h);
    CUresult rc = !p || p->is_default ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (rc == CUDA_SUCCESS) {
        for (int d = 0; d < SHIM_MAX_DEVICES; d++)
            if (current[d] == h)
                current[d] = NULL;
        /* what is still allocated stays valid; the pool goes when it is
         * all back (the driver's, empty, at once) */
        p->destroyed = true;
        maybe_forget(p);
    }
    pthread_mutex_unlock(&mu);
    if (rc == CUDA_SUCCESS)
        real_cuMemPoolDestroy(h);
    return rc;
}

CUresult ownpool_trim(CUmemoryPool h, size_t keep)
{
    pthread_mutex_lock(&mu);
    struct ownpool *p = pool_of(h);
    if (p)
        arena_shrink(&p->a, keep);
    pthread_mutex_unlock(&mu);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Where attribute attr lives in p: an int (the reuse flags) or a
 * cuuint64_t; NULL for none. */
static void *attr_of(struct ownpool *p, int attr, bool *is_int)
{
    *is_int = attr >= CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES &&
              attr <= CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
    if (*is_int)
        return &p->reuse[attr];
    switch (attr) {
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
        return &p->threshold;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
        return &p->a.reserved;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
        return &p->a.reserved_high;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
        return &p->a.used;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        return &p->a.used_high;
    default:
        return NULL;
    }
}

CUresult ownpool_set_attr(CUmemoryPool h, int attr, const void *value)
{
    pthread_mutex_lock(&mu);
    struct ownpool *p = pool_of(h);
    bool is_int;
    void *at = p && value ? attr_of(p, attr, &is_int) : NULL;
    uint64_t v = 0;
    if (at && !is_int)
        memcpy(&v, value, sizeof v);
    CUresult rc = CUDA_SUCCESS;
    if (!at || attr == CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT ||
        attr == CU_MEMPOOL_ATTR_USED_MEM_CURRENT)
        rc = CUDA_ERROR_INVALID_VALUE;
    else if (is_int)
        memcpy(at, value, sizeof(int));
    else if (attr == CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
        p->threshold = v;
    else if (v) /* a high mark can only be reset, to what is held now */
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        *(uint64_t *)at = attr == CU_MEMPOOL_ATTR_USED_MEM_HIGH ? p->a.used : p->a.reserved;
    pthread_mutex_unlock(&mu);
    return rc;
}

CUresult ownpool_get_attr(CUmemoryPool h, int attr, void *value)
{
    pthread_mutex_lock(&mu);
    struct ownpool *p = pool_of(h);
    bool is_int;
    void *at = p && value ? attr_of(p, attr, &is_int) : NULL;
    if (at)
        memcpy(value, at, is_int ? sizeof(int) : sizeof(uint64_t));
    pthread_mutex_unlock(&mu);
    return at ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult ownpool_set_access(CUmemoryPool h, const CUmemAccessDesc *desc, size_t count)
{
    int n = 0;
    if (!desc && count)
        return CUDA_ERROR_INVALID_VALUE;
    if (!real_cuDeviceGetCount || real_cuDeviceGetCount(&n) != CUDA_SUCCESS)
        return CUDA_ERROR_NOT_INITIALIZED;
    pthread_mutex_lock(&mu);
    struct ownpool *p = pool_of(h);
    CUresult rc = p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    uint64_t r = p ? p->a.readers : 0, w = p ? p->a.writers : 0;
    for (size_t i = 0; rc == CUDA_SUCCESS && i < count; i++) {
        int d = desc[i].location.id;
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || d < 0 || d >= n ||
            d >= SHIM_MAX_DEVICES || (unsigned)desc[i].flags > 3 || desc[i].flags == 2)
            rc = CUDA_ERROR_INVALID_VALUE;
        else if (d == p->a.dev && desc[i].flags != 3) /* its own device keeps it all */
            rc = CUDA_ERROR_INVALID_DEVICE;
        uint64_t bit = 1ULL << (d & 63);
        r = desc[i].flags & 1 ? r | bit : r & ~bit;
        w = desc[i].flags & 2 ? w | bit : w & ~bit;
    }
    if (rc == CUDA_SUCCESS)
        rc = arena_access(&p->a, r, w);
    pthread_mutex_unlock(&mu);
    return rc;
}

CUresult ownpool_get_access(int *flags, CUmemoryPool h, const CUmemLocation *loc)
{
    if (!flags || !loc)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mu);
    struct ownpool *p = pool_of(h);
    CUresult rc =
        p && loc->type == CU_MEM_LOCATION_TYPE_DEVICE && loc->id >= 0 && loc->id < SHIM_MAX_DEVICES
            ? CUDA_SUCCESS
            : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *flags = loc->id == p->a.dev
                     ? 3
                     : (int)((p->a.readers >> loc->id & 1) | (p->a.writers >> loc->id & 1) << 1);
    pthread_mutex_unlock(&mu);
    return rc;
}

static bool dev_ok(CUdevice dev)
{
    int n = 0;
    return dev >= 0 && dev < SHIM_MAX_DEVICES && real_cuDeviceGetCount &&
           real_cuDeviceGetCount(&n) == CUDA_SUCCESS && dev < n;
}

CUresult ownpool_default(CUmemoryPool *out, CUdevice dev)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    if (!dev_ok(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&mu);
    struct ownpool *p = default_of(dev);
    if (p)
        *out = p->handle;
    pthread_mutex_unlock(&mu);
    return p ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult ownpool_current(CUmemoryPool *out, CUdevice dev)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    if (!dev_ok(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&mu);
    struct ownpool *p = current[dev] ? NULL : default_of(dev);
    *out = current[dev] ? current[dev] : p ? p->handle : NULL;
    pthread_mutex_unlock(&mu);
    return *out ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult ownpool_set_current(CUdevice dev, CUmemoryPool h, bool driver)
{
    if (!dev_ok(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&mu);
    struct ownpool *p = driver ? NULL : pool_of(h);
    CUresult rc = driver || (p && p->a.dev == dev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) {
        current[dev] = h;
        current_driver[dev] = driver;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

void ownpool_synced(enum ownpool_sync what, CUstream stream)
{
    if (!atomic_load(&any))
        return;
    CUcontext ctx = NULL;
    if (what != OWNPOOL_SYNC_OTHER &&
        (!real_cuCtxGetCurrent || real_cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx))
        what = OWNPOOL_SYNC_OTHER;
    pthread_mutex_lock(&mu);
    for (unsigned i = npools; i-- > 0;) {
        struct ownpool *p = pools[i];
        if (what != OWNPOOL_SYNC_OTHER)
            arena_done(&p->a, ctx, what == OWNPOOL_SYNC_CONTEXT, stream);
        if (p->a.dirty)
            arena_settle(&p->a, false);
        if (!maybe_forget(p))
            arena_shrink(&p->a, p->threshold);
    }
    pthread_mutex_unlock(&mu);
}

void ownpool_each_idle(void (*fn)(uint64_t va, void *arg), void *arg)
{
    pthread_mutex_lock(&mu);
    for (unsigned i = 0; i < npools; i++)
        arena_each_idle(&pools[i]->a, fn, arg);
    pthread_mutex_unlock(&mu);
}

void ownpool_stream_gone(CUstream s)
{
    if (special(s) || !atomic_load(&any))
        return;
    pthread_mutex_lock(&mu);
    for (unsigned i = 0; i < npools; i++)
        arena_stream_gone(&pools[i]->a, s);
    pthread_mutex_unlock(&mu);
}

void ownpool_after_fork(void)
{
    /* the child has none of the parent's GPU memory or events; what the
     * parent's pools held is forgotten, not freed */
    pthread_mutex_init(&mu, NULL);
    npools = 0;
    memset(defaults, 0, sizeof defaults);
    memset(current, 0, sizeof current);
    memset(current_driver, 0, sizeof current_driver);
    freeevent_after_fork();
    addrmap_forget(&live);
    atomic_store(&any, false);
}
