/* spool: libvramcap's stream-ordered pools (see spool.h for why).
 *
 * A pool is chunks of movable memory (swap_chunk) cut into blocks, each
 * either live (handed out, found by address in a hash table) or free (in
 * one of the pool's bins by size, tagged with the stream that freed it
 * and an event recorded there at the free). The driver's rules for reuse:
 *   - on the stream that freed it, at once: the stream's order is enough;
 *   - on another stream once the free is known done (a synchronize said
 *     so, or the event has completed), with nothing to wait for;
 *   - otherwise after making the stream wait for the event (the pool's
 *     "internal dependencies", on by default; with them off such a block
 *     is passed over).
 * Small requests share 2 MiB chunks, middling ones 20 MiB chunks, large
 * ones get a chunk of their size; neighbouring free blocks merge when one
 * tag covers both. A synchronize is when, as the driver does, a pool gives
 * back to the driver whole free chunks past its release threshold (0 by
 * default); cuMemPoolTrimTo does the same down to its figure.
 *
 * While a stream captures a graph its allocations are allocation nodes,
 * the driver's (graph.c deals with them at a suspend); a pool made
 * exportable to other processes is the driver's too. One lock guards it
 * all; it is taken before the swap table's (a chunk is made under it), and
 * no suspend can find it held: every entry point here waits at the gate. */
#include "shim/spool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "shim/amap.h"
#include "shim/gate.h"
#include "shim/hook.h"
#include "shim/sev.h"
#include "shim/shim.h"
#include "shim/swap.h"

#define ALIGN     512ULL
#define NBINS     48
#define MAX_POOLS 256
#define SMALL     (1ULL << 20)
#define MIDDLE    (10ULL << 20)

struct schunk;

struct sblk {
    uint64_t va, size;
    struct schunk *chunk;
    struct sblk *prev, *next;   /* neighbours in the chunk, by address */
    struct sblk *fprev, *fnext; /* in its bin, while free */
    bool free;
    CUstream stream; /* free: freed on it */
    struct sev *sev; /* free: its free's event; NULL once known done */
};

struct spool;

struct schunk {
    uint64_t va, size;
    struct spool *pool;
    struct sblk *first;
    struct schunk *next;
    unsigned nlive; /* blocks handed out */
};

struct spool {
    CUmemoryPool handle; /* the program's: an empty pool of the driver's, so that
                          * any check the runtime makes of it holds */
    CUdevice dev;
    CUmemPoolProps props;
    bool is_default, destroyed, dirty;
    int reuse[4]; /* by attribute number */
    uint64_t threshold, used, reserved, used_high, reserved_high;
    uint64_t readers, writers; /* cuMemPoolSetAccess */
    struct schunk *chunks;
    struct sblk *bins[NBINS];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool any; /* a pool exists: synchronizes have work here */
static struct spool *pools[MAX_POOLS];
static unsigned npools;
static struct spool *defaults[SHIM_MAX_DEVICES];
static CUmemoryPool current[SHIM_MAX_DEVICES]; /* NULL: the default */
static bool current_driver[SHIM_MAX_DEVICES];   /* current is the driver's */
static struct amap live; /* the blocks handed out, by address */

/* What a destroyed stream's blocks are tagged with instead */
#define GONE ((CUstream)(uintptr_t)-1)

static bool special(CUstream s)
{
    return s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD || s == GONE;
}

/* ---- bins ---- */

static unsigned bin_of(uint64_t size)
{
    unsigned b = 63 - (unsigned)__builtin_clzll(size | 1);
    return b < NBINS ? b : NBINS - 1;
}

static void bin_add(struct spool *p, struct sblk *b)
{
    struct sblk **head = &p->bins[bin_of(b->size)];
    b->fprev = NULL;
    b->fnext = *head;
    if (*head)
        (*head)->fprev = b;
    *head = b;
}

static void bin_del(struct spool *p, struct sblk *b)
{
    if (b->fprev)
        b->fprev->fnext = b->fnext;
    else
        p->bins[bin_of(b->size)] = b->fnext;
    if (b->fnext)
        b->fnext->fprev = b->fprev;
    b->fprev = b->fnext = NULL;
}

static void note_high(struct spool *p)
{
    if (p->used > p->used_high)
        p->used_high = p->used;
    if (p->reserved > p->reserved_high)
        p->reserved_high = p->reserved;
}

/* Whether a free block's free is known done. */
static bool clean(const struct sblk *b)
{
    return b->sev == NULL;
}

/* Neighbours a and b (a first) become one free block when one tag covers
 * both: either is done, or both were freed on one stream (the later event
 * covers the earlier). Lock held. */
static bool mergeable(const struct sblk *a, const struct sblk *b)
{
    return a && b && a->free && b->free &&
           (clean(a) || clean(b) ||
            (a->stream == b->stream && !special(a->stream) && a->sev->ctx == b->sev->ctx));
}

/* b takes its next neighbour in; the tag kept is the later free's (*later
 * is b's when later_is_b). Lock held; both out of their bins. */
static void absorb(struct sblk *b, bool later_is_b)
{
    struct sblk *n = b->next;
    if (clean(b) || (!clean(n) && !later_is_b)) {
        sev_put(b->sev);
        b->sev = n->sev;
        b->stream = n->stream;
    } else {
        sev_put(n->sev);
    }
    b->size += n->size;
    b->next = n->next;
    if (n->next)
        n->next->prev = b;
    free(n);
}

/* Puts a free block in its bin, merged with its free neighbours where a
 * tag covers both (b's free is the latest). Lock held. */
static void place_free(struct spool *p, struct sblk *b)
{
    if (mergeable(b->prev, b)) { /* prev takes b in; b's tag is the later */
        b = b->prev;
        bin_del(p, b);
        absorb(b, false);
    }
    if (mergeable(b, b->next)) {
        bin_del(p, b->next);
        absorb(b, true);
    }
    bin_add(p, b);
}

/* Gives a whole free, done chunk back to the driver. Lock held. */
static void chunk_drop(struct spool *p, struct schunk *c)
{
    bin_del(p, c->first);
    free(c->first);
    for (struct schunk **q = &p->chunks; *q; q = &(*q)->next)
        if (*q == c) {
            *q = c->next;
            break;
        }
    p->reserved -= c->size;
    swap_chunk_free(c->va);
    free(c);
}

static bool chunk_idle(const struct schunk *c)
{
    return c->first->free && c->first->size == c->size && clean(c->first);
}

/* Every free block whose free has completed (asking the driver) becomes
 * done, and merges with its done neighbours. Lock held. */
static void settle(struct spool *p, bool ask)
{
    for (unsigned k = 0; k < NBINS; k++)
        for (struct sblk *b = p->bins[k]; ask && b; b = b->fnext)
            if (!clean(b) && real_cuEventQuery && real_cuEventQuery(b->sev->ev) == CUDA_SUCCESS) {
                sev_put(b->sev);
                b->sev = NULL;
            }
    for (struct schunk *c = p->chunks; c; c = c->next)
        for (struct sblk *b = c->first; b && b->next;)
            if (b->free && b->next->free && clean(b) && clean(b->next)) {
                bin_del(p, b);
                bin_del(p, b->next);
                absorb(b, true);
                bin_add(p, b);
            } else {
                b = b->next;
            }
    p->dirty = false;
}

/* Down to keep bytes reserved, whole idle chunks at a time. Lock held. */
static void shrink(struct spool *p, uint64_t keep)
{
    if (p->reserved <= keep)
        return;
    settle(p, true);
    for (struct schunk *c = p->chunks, *n; c && p->reserved > keep; c = n) {
        n = c->next;
        if (chunk_idle(c))
            chunk_drop(p, c);
    }
}

static void forget(struct spool *p)
{
    for (unsigned i = 0; i < npools; i++)
        if (pools[i] == p) {
            pools[i] = pools[--npools];
            break;
        }
    free(p);
}

/* A destroyed pool goes once nothing of it is left. Lock held. */
static bool maybe_forget(struct spool *p)
{
    if (!p->destroyed)
        return false;
    shrink(p, 0);
    if (p->chunks)
        return false;
    forget(p);
    return true;
}

static struct spool *pool_new(CUmemoryPool handle, CUdevice dev, const CUmemPoolProps *props)
{
    if (npools == MAX_POOLS)
        return NULL;
    struct spool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->handle = handle;
    p->dev = dev;
    p->props = *props;
    p->reuse[1] = p->reuse[2] = p->reuse[3] = 1;
    pools[npools++] = p;
    atomic_store(&any, true);
    return p;
}

/* Ours, or NULL. Lock held. */
static struct spool *pool_of(CUmemoryPool h)
{
    for (unsigned i = 0; h && i < npools; i++)
        if (pools[i]->handle == h && !pools[i]->destroyed)
            return pools[i];
    return NULL;
}

static struct spool *default_of(CUdevice dev)
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

/* A chunk for a request of size bytes: what the pool does not hold unused
 * on this device goes back first when the driver is out of memory. Lock
 * held. */
static struct sblk *grow(struct spool *p, uint64_t size)
{
    uint64_t want = size <= SMALL ? 2 * SMALL : size <= MIDDLE ? 2 * MIDDLE : size;
    if (p->props.maxSize && p->reserved + want > p->props.maxSize)
        return NULL;
    CUdeviceptr va;
    uint64_t got;
    /* made outside any capture's rules: this thread may be forbidden calls
     * that are unsafe while another one captures, and these are ours */
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    bool swapped = real_cuThreadExchangeStreamCaptureMode &&
                   real_cuThreadExchangeStreamCaptureMode(&mode) == CUDA_SUCCESS;
    CUresult rc = swap_chunk(p->dev, want, 0, &va, &got);
    for (unsigned i = 0; rc == CUDA_ERROR_OUT_OF_MEMORY && i < npools; i++)
        if (pools[i]->dev == p->dev && pools[i] != p)
            shrink(pools[i], 0);
    if (rc == CUDA_ERROR_OUT_OF_MEMORY) {
        shrink(p, 0);
        rc = swap_chunk(p->dev, want, 0, &va, &got);
    }
    if (swapped)
        real_cuThreadExchangeStreamCaptureMode(&mode);
    if (rc != CUDA_SUCCESS)
        return NULL;
    struct schunk *c = calloc(1, sizeof *c);
    struct sblk *b = calloc(1, sizeof *b);
    if (!c || !b) {
        free(c);
        free(b);
        swap_chunk_free(va);
        return NULL;
    }
    *c = (struct schunk){va, got, p, b, p->chunks};
    *b = (struct sblk){.va = va, .size = got, .chunk = c, .free = true};
    p->chunks = c;
    p->reserved += got;
    note_high(p);
    bin_add(p, b);
    if (p->readers && swap_chunk_access(va, p->readers, p->writers) != CUDA_SUCCESS) {
        chunk_drop(p, c); /* its peers could not reach it */
        return NULL;
    }
    return b;
}

/* A free block of at least size bytes that stream may take (waiting for
 * its free where it must), or NULL. Lock held. */
static struct sblk *find(struct spool *p, uint64_t size, CUstream stream)
{
    bool waits = p->reuse[CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES] != 0;
    for (unsigned k = bin_of(size); k < NBINS; k++)
        for (struct sblk *b = p->bins[k]; b; b = b->fnext) {
            if (b->size < size)
                continue;
            bool ready = clean(b) || (b->stream == stream && !special(stream));
            if (!ready && !waits)
                continue;
            if (!ready && real_cuStreamWaitEvent(stream, b->sev->ev, 0) != CUDA_SUCCESS &&
                real_cuEventSynchronize(b->sev->ev) != CUDA_SUCCESS)
                continue;
            return b;
        }
    return NULL;
}

/* Hands out size bytes of b, the rest staying free with b's tag. */
static void take(struct spool *p, struct sblk *b, uint64_t size)
{
    bin_del(p, b);
    if (b->size - size >= ALIGN) {
        struct sblk *r = calloc(1, sizeof *r);
        if (r) {
            *r = (struct sblk){.va = b->va + size,
                               .size = b->size - size,
                               .chunk = b->chunk,
                               .prev = b,
                               .next = b->next,
                               .free = true,
                               .stream = b->stream,
                               .sev = b->sev};
            if (r->sev)
                r->sev->refs++;
            if (b->next)
                b->next->prev = r;
            b->next = r;
            b->size = size;
            bin_add(p, r);
        }
    }
    sev_put(b->sev);
    b->sev = NULL;
    b->free = false;
    b->chunk->nlive++;
    p->used += b->size;
    note_high(p);
}

/* The device a stream belongs to (the current context's for the special
 * handles, or when the driver cannot say). */
static CUdevice stream_device(CUstream s)
{
    CUdevice d = -1;
    if (special(s) || !real_cuStreamGetDevice || real_cuStreamGetDevice(s, &d) != CUDA_SUCCESS)
        d = shim_device_now();
    return d;
}

/* Whether stream is capturing a graph (or may not be used: then the
 * driver answers). */
static bool capturing(CUstream s)
{
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    return real_cuStreamIsCapturing &&
           (real_cuStreamIsCapturing(s, &st) != CUDA_SUCCESS ||
            st != CU_STREAM_CAPTURE_STATUS_NONE);
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

CUresult spool_alloc(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, bool has_pool,
                     CUstream stream, bool ptsz, enum atab_kind *kind)
{
    *kind = ATAB_ASYNC;
    if (ptsz && stream == NULL)
        stream = CU_STREAM_PER_THREAD;
    CUdevice dev = has_pool ? -1 : stream_device(stream);
    pthread_mutex_lock(&mu);
    struct spool *p = has_pool ? pool_of(pool) : NULL;
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
    if (capturing(stream)) {
        /* an allocation node: graph memory, the driver's (with the
         * properties of the driver's pool behind the handle) */
        *kind = ATAB_GRAPH;
        return driver_alloc(dptr, size, p->handle, true, stream, ptsz);
    }
    if (size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t want = ((uint64_t)size + ALIGN - 1) & ~(ALIGN - 1);
    if (want < size)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&mu);
    CUresult rc = CUDA_SUCCESS;
    struct sblk *b = find(p, want, stream);
    if (!b && !(b = grow(p, want)))
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    if (b) {
        take(p, b, want);
        if (amap_put(&live, b->va, b) < 0) { /* cannot be found again: not handed out */
            p->used -= b->size;
            b->chunk->nlive--;
            b->free = true;
            place_free(p, b);
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            *dptr = b->va;
            *kind = ATAB_POOL;
        }
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

/* Back to its pool, tagged with stream and the event sev (NULL: known
 * done). Lock held; b already out of the live table. */
static void give_back(struct sblk *b, CUstream stream, struct sev *sev)
{
    struct spool *p = b->chunk->pool;
    p->used -= b->size;
    b->chunk->nlive--;
    b->free = true;
    b->stream = stream;
    b->sev = sev;
    place_free(p, b);
    p->dirty = true;
    if (p->destroyed)
        maybe_forget(p);
}

CUresult spool_free(CUdeviceptr ptr, CUstream stream, bool ptsz)
{
    if (ptsz && stream == NULL)
        stream = CU_STREAM_PER_THREAD;
    pthread_mutex_lock(&mu);
    struct sblk *b = amap_get(&live, ptr, 0);
    /* during a capture a free is a free node, for graph memory only: the
     * driver says no to ours as it would to its own pool's */
    if (b && !capturing(stream)) {
        amap_get(&live, ptr, 1);
        struct sev *s = sev_get();
        if (s && real_cuEventRecord(s->ev, stream) != CUDA_SUCCESS) {
            sev_put(s);
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

int spool_free_now(CUdeviceptr ptr, CUresult *rc)
{
    pthread_mutex_lock(&mu);
    struct sblk *b = amap_get(&live, ptr, 1);
    if (b) {
        /* the driver's cuMemFree of pool memory waits for the work before */
        *rc = real_cuCtxSynchronize();
        give_back(b, NULL, NULL);
    }
    pthread_mutex_unlock(&mu);
    return b != NULL;
}

bool spool_ours(CUmemoryPool h)
{
    pthread_mutex_lock(&mu);
    bool r = pool_of(h) != NULL;
    pthread_mutex_unlock(&mu);
    return r;
}

bool spool_has(CUdeviceptr ptr)
{
    pthread_mutex_lock(&mu);
    bool r = amap_get(&live, ptr, 0) != NULL;
    pthread_mutex_unlock(&mu);
    return r;
}

CUresult spool_create(CUmemoryPool *out, const CUmemPoolProps *props)
{
    int n = 0;
    if (!out || !props || props->allocType != 1 ||
        props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (!real_cuDeviceGetCount || real_cuDeviceGetCount(&n) != CUDA_SUCCESS ||
        props->location.id < 0 || props->location.id >= n ||
        props->location.id >= SHIM_MAX_DEVICES)
        return CUDA_ERROR_INVALID_DEVICE;
    CUmemoryPool h = NULL;
    CUresult rc = real_cuMemPoolCreate(&h, props);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&mu);
    struct spool *p = pool_new(h, props->location.id, props);
    pthread_mutex_unlock(&mu);
    if (!p) {
        real_cuMemPoolDestroy(h);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *out = h;
    return CUDA_SUCCESS;
}

CUresult spool_destroy(CUmemoryPool h)
{
    pthread_mutex_lock(&mu);
    struct spool *p = pool_of(h);
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

CUresult spool_trim(CUmemoryPool h, size_t keep)
{
    pthread_mutex_lock(&mu);
    struct spool *p = pool_of(h);
    if (p)
        shrink(p, keep);
    pthread_mutex_unlock(&mu);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Where attribute attr lives in p: an int (the reuse flags) or a
 * cuuint64_t; NULL for none. */
static void *attr_of(struct spool *p, int attr, bool *is_int)
{
    *is_int = attr >= CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES &&
              attr <= CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES;
    if (*is_int)
        return &p->reuse[attr];
    switch (attr) {
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
        return &p->threshold;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
        return &p->reserved;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
        return &p->reserved_high;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
        return &p->used;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        return &p->used_high;
    default:
        return NULL;
    }
}

CUresult spool_set_attr(CUmemoryPool h, int attr, const void *value)
{
    pthread_mutex_lock(&mu);
    struct spool *p = pool_of(h);
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
        *(uint64_t *)at = attr == CU_MEMPOOL_ATTR_USED_MEM_HIGH ? p->used : p->reserved;
    pthread_mutex_unlock(&mu);
    return rc;
}

CUresult spool_get_attr(CUmemoryPool h, int attr, void *value)
{
    pthread_mutex_lock(&mu);
    struct spool *p = pool_of(h);
    bool is_int;
    void *at = p && value ? attr_of(p, attr, &is_int) : NULL;
    if (at)
        memcpy(value, at, is_int ? sizeof(int) : sizeof(uint64_t));
    pthread_mutex_unlock(&mu);
    return at ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult spool_set_access(CUmemoryPool h, const CUmemAccessDesc *desc, size_t count)
{
    int n = 0;
    if (!desc && count)
        return CUDA_ERROR_INVALID_VALUE;
    if (!real_cuDeviceGetCount || real_cuDeviceGetCount(&n) != CUDA_SUCCESS)
        return CUDA_ERROR_NOT_INITIALIZED;
    pthread_mutex_lock(&mu);
    struct spool *p = pool_of(h);
    CUresult rc = p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    uint64_t r = p ? p->readers : 0, w = p ? p->writers : 0;
    for (size_t i = 0; rc == CUDA_SUCCESS && i < count; i++) {
        int d = desc[i].location.id;
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || d < 0 || d >= n ||
            d >= SHIM_MAX_DEVICES || (unsigned)desc[i].flags > 3 || desc[i].flags == 2)
            rc = CUDA_ERROR_INVALID_VALUE;
        else if (d == p->dev && desc[i].flags != 3) /* its own device keeps it all */
            rc = CUDA_ERROR_INVALID_DEVICE;
        uint64_t bit = 1ULL << (d & 63);
        r = desc[i].flags & 1 ? r | bit : r & ~bit;
        w = desc[i].flags & 2 ? w | bit : w & ~bit;
    }
    for (struct schunk *c = rc == CUDA_SUCCESS ? p->chunks : NULL; c && rc == CUDA_SUCCESS;
         c = c->next)
        rc = swap_chunk_access(c->va, r, w);
    if (rc == CUDA_SUCCESS) {
        p->readers = r;
        p->writers = w;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

CUresult spool_get_access(int *flags, CUmemoryPool h, const CUmemLocation *loc)
{
    if (!flags || !loc)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&mu);
    struct spool *p = pool_of(h);
    CUresult rc = p && loc->type == CU_MEM_LOCATION_TYPE_DEVICE && loc->id >= 0 &&
                          loc->id < SHIM_MAX_DEVICES
                      ? CUDA_SUCCESS
                      : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *flags = loc->id == p->dev
                     ? 3
                     : (int)((p->readers >> loc->id & 1) | (p->writers >> loc->id & 1) << 1);
    pthread_mutex_unlock(&mu);
    return rc;
}

static bool dev_ok(CUdevice dev)
{
    int n = 0;
    return dev >= 0 && dev < SHIM_MAX_DEVICES && real_cuDeviceGetCount &&
           real_cuDeviceGetCount(&n) == CUDA_SUCCESS && dev < n;
}

CUresult spool_default(CUmemoryPool *out, CUdevice dev)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    if (!dev_ok(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&mu);
    struct spool *p = default_of(dev);
    if (p)
        *out = p->handle;
    pthread_mutex_unlock(&mu);
    return p ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult spool_current(CUmemoryPool *out, CUdevice dev)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    if (!dev_ok(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&mu);
    struct spool *p = current[dev] ? NULL : default_of(dev);
    *out = current[dev] ? current[dev] : p ? p->handle : NULL;
    pthread_mutex_unlock(&mu);
    return *out ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult spool_set_current(CUdevice dev, CUmemoryPool h, bool driver)
{
    if (!dev_ok(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&mu);
    struct spool *p = driver ? NULL : pool_of(h);
    CUresult rc = driver || (p && p->dev == dev) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS) {
        current[dev] = h;
        current_driver[dev] = driver;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

void spool_synced(enum spool_sync what, CUstream stream)
{
    if (!atomic_load(&any))
        return;
    CUcontext ctx = NULL;
    if (what != SPOOL_SYNC_OTHER &&
        (!real_cuCtxGetCurrent || real_cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx))
        what = SPOOL_SYNC_OTHER;
    pthread_mutex_lock(&mu);
    for (unsigned i = npools; i-- > 0;) {
        struct spool *p = pools[i];
        for (unsigned k = 0; what != SPOOL_SYNC_OTHER && k < NBINS; k++)
            for (struct sblk *b = p->bins[k]; b; b = b->fnext)
                if (!clean(b) && b->sev->ctx == ctx &&
                    (what == SPOOL_SYNC_CONTEXT || b->stream == stream)) {
                    sev_put(b->sev);
                    b->sev = NULL;
                    p->dirty = true;
                }
        if (p->dirty)
            settle(p, false);
        if (!maybe_forget(p))
            shrink(p, p->threshold);
    }
    pthread_mutex_unlock(&mu);
}

void spool_each_idle(void (*fn)(uint64_t va, void *arg), void *arg)
{
    pthread_mutex_lock(&mu);
    for (unsigned i = 0; i < npools; i++)
        for (struct schunk *c = pools[i]->chunks; c; c = c->next)
            if (!c->nlive)
                fn(c->va, arg);
    pthread_mutex_unlock(&mu);
}

void spool_stream_gone(CUstream s)
{
    if (special(s) || !atomic_load(&any))
        return;
    pthread_mutex_lock(&mu);
    for (unsigned i = 0; i < npools; i++)
        for (unsigned k = 0; k < NBINS; k++)
            for (struct sblk *b = pools[i]->bins[k]; b; b = b->fnext)
                if (b->stream == s)
                    b->stream = GONE;
    pthread_mutex_unlock(&mu);
}

void spool_after_fork(void)
{
    /* the child has none of the parent's GPU memory or events; what the
     * parent's pools held is forgotten, not freed */
    pthread_mutex_init(&mu, NULL);
    npools = 0;
    memset(defaults, 0, sizeof defaults);
    memset(current, 0, sizeof current);
    memset(current_driver, 0, sizeof current_driver);
    sev_after_fork();
    amap_forget(&live);
    atomic_store(&any, false);
}
