/* sblock: a stream-ordered pool's memory, chunks cut into blocks (see
 * sblock.h). */
#include "shim/sblock.h"

#include <stdlib.h>

#include "shim/driver.h"
#include "shim/ownmem.h"
#include "shim/sev.h"

#define SMALL  (1ULL << 20)
#define MIDDLE (10ULL << 20)
/* what a destroyed stream's blocks are tagged with instead */
#define GONE ((CUstream)(uintptr_t)-1)

static bool legacy(CUstream s)
{
    return s == NULL || s == CU_STREAM_LEGACY;
}

/* Whether a free made on a (in context actx) is ordered before work on s
 * (in ctx) by the stream alone: the same stream, or a context's legacy
 * stream under either name; never a thread's own default stream (the
 * handle names a different one in each thread). */
static bool same_stream(CUstream a, CUcontext actx, CUstream s, CUcontext ctx)
{
    if (legacy(a) && legacy(s))
        return actx == ctx && ctx != NULL;
    return a == s && !legacy(s) && s != CU_STREAM_PER_THREAD && s != GONE;
}

static unsigned bin_of(uint64_t size)
{
    unsigned b = 63 - (unsigned)__builtin_clzll(size | 1);
    return b < SBLOCK_BINS ? b : SBLOCK_BINS - 1;
}

static void bin_add(struct sarena *a, struct sblk *b)
{
    struct sblk **head = &a->bins[bin_of(b->size)];
    b->fprev = NULL;
    b->fnext = *head;
    if (*head)
        (*head)->fprev = b;
    *head = b;
}

static void bin_del(struct sarena *a, struct sblk *b)
{
    if (b->fprev)
        b->fprev->fnext = b->fnext;
    else
        a->bins[bin_of(b->size)] = b->fnext;
    if (b->fnext)
        b->fnext->fprev = b->fprev;
    b->fprev = b->fnext = NULL;
}

static void note_high(struct sarena *a)
{
    if (a->used > a->used_high)
        a->used_high = a->used;
    if (a->reserved > a->reserved_high)
        a->reserved_high = a->reserved;
}

/* Whether a free block's free is known done. */
static bool clean(const struct sblk *b)
{
    return b->sev == NULL;
}

/* Neighbours x and y become one free block when one tag covers both:
 * either is done, or both were freed on one stream (the later event covers
 * the earlier). */
static bool mergeable(const struct sblk *x, const struct sblk *y)
{
    return x && y && x->free && y->free &&
           (clean(x) || clean(y) ||
            (x->sev->ctx == y->sev->ctx &&
             same_stream(x->stream, x->sev->ctx, y->stream, y->sev->ctx)));
}

/* b takes its next neighbour in; the tag kept is the later free's (b's
 * when later_is_b). Both out of their bins. */
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
 * tag covers both (b's free is the latest). */
static void place_free(struct sarena *a, struct sblk *b)
{
    if (mergeable(b->prev, b)) { /* prev takes b in; b's tag is the later */
        b = b->prev;
        bin_del(a, b);
        absorb(b, false);
    }
    if (mergeable(b, b->next)) {
        bin_del(a, b->next);
        absorb(b, true);
    }
    bin_add(a, b);
}

/* Gives a whole free, done chunk back to the driver. */
static void chunk_drop(struct sarena *a, struct schunk *c)
{
    bin_del(a, c->first);
    free(c->first);
    for (struct schunk **q = &a->chunks; *q; q = &(*q)->next)
        if (*q == c) {
            *q = c->next;
            break;
        }
    a->reserved -= c->size;
    ownmem_chunk_free(c->va);
    free(c);
}

static bool chunk_idle(const struct schunk *c)
{
    return c->first->free && c->first->size == c->size && clean(c->first);
}

void sblock_settle(struct sarena *a, bool ask)
{
    for (unsigned k = 0; k < SBLOCK_BINS; k++)
        for (struct sblk *b = a->bins[k]; ask && b; b = b->fnext)
            if (!clean(b) && real_cuEventQuery && real_cuEventQuery(b->sev->ev) == CUDA_SUCCESS) {
                sev_put(b->sev);
                b->sev = NULL;
            }
    for (struct schunk *c = a->chunks; c; c = c->next)
        for (struct sblk *b = c->first; b && b->next;)
            if (b->free && b->next->free && clean(b) && clean(b->next)) {
                bin_del(a, b);
                bin_del(a, b->next);
                absorb(b, true);
                bin_add(a, b);
            } else {
                b = b->next;
            }
    a->dirty = false;
}

void sblock_shrink(struct sarena *a, uint64_t keep)
{
    if (a->reserved <= keep)
        return;
    sblock_settle(a, true);
    for (struct schunk *c = a->chunks, *n; c && a->reserved > keep; c = n) {
        n = c->next;
        if (chunk_idle(c))
            chunk_drop(a, c);
    }
}

CUresult sblock_grow(struct sarena *a, uint64_t size)
{
    uint64_t want = size <= SMALL ? 2 * SMALL : size <= MIDDLE ? 2 * MIDDLE : size;
    if (a->max && a->reserved + want > a->max)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUdeviceptr va;
    uint64_t got;
    /* made outside any capture's rules: this thread may be forbidden calls
     * that are unsafe while another one captures, and these are ours */
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    bool swapped = real_cuThreadExchangeStreamCaptureMode &&
                   real_cuThreadExchangeStreamCaptureMode(&mode) == CUDA_SUCCESS;
    CUresult rc = ownmem_chunk(a->dev, want, 0, &va, &got);
    if (swapped)
        real_cuThreadExchangeStreamCaptureMode(&mode);
    if (rc != CUDA_SUCCESS)
        return rc;
    struct schunk *c = calloc(1, sizeof *c);
    struct sblk *b = calloc(1, sizeof *b);
    if (!c || !b) {
        free(c);
        free(b);
        ownmem_chunk_free(va);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *c = (struct schunk){va, got, a, b, a->chunks, 0};
    *b = (struct sblk){.va = va, .size = got, .chunk = c, .free = true};
    a->chunks = c;
    a->reserved += got;
    note_high(a);
    bin_add(a, b);
    if (a->readers && (rc = ownmem_chunk_access(va, a->readers, a->writers)) != CUDA_SUCCESS)
        chunk_drop(a, c); /* its peers could not reach it */
    return rc;
}

/* Hands out size bytes of b, the rest staying free with b's tag. */
static void hand_out(struct sarena *a, struct sblk *b, uint64_t size)
{
    bin_del(a, b);
    if (b->size - size >= SBLOCK_ALIGN) {
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
            bin_add(a, r);
        }
    }
    sev_put(b->sev);
    b->sev = NULL;
    b->free = false;
    b->chunk->nlive++;
    a->used += b->size;
    note_high(a);
}

struct sblk *sblock_alloc(struct sarena *a, uint64_t size, CUstream stream)
{
    CUcontext ctx = NULL;
    if (legacy(stream) && real_cuCtxGetCurrent && real_cuCtxGetCurrent(&ctx) != CUDA_SUCCESS)
        ctx = NULL;
    for (unsigned k = bin_of(size); k < SBLOCK_BINS; k++)
        for (struct sblk *b = a->bins[k]; b; b = b->fnext) {
            if (b->size < size)
                continue;
            bool ready = clean(b) || same_stream(b->stream, b->sev->ctx, stream, ctx);
            if (!ready && !a->waits)
                continue;
            if (!ready && real_cuStreamWaitEvent(stream, b->sev->ev, 0) != CUDA_SUCCESS &&
                real_cuEventSynchronize(b->sev->ev) != CUDA_SUCCESS)
                continue;
            hand_out(a, b, size);
            return b;
        }
    return NULL;
}

void sblock_free(struct sarena *a, struct sblk *b, CUstream stream, struct sev *sev)
{
    a->used -= b->size;
    b->chunk->nlive--;
    b->free = true;
    b->stream = stream;
    b->sev = sev;
    place_free(a, b);
    a->dirty = true;
}

void sblock_done(struct sarena *a, CUcontext ctx, bool all, CUstream stream)
{
    for (unsigned k = 0; k < SBLOCK_BINS; k++)
        for (struct sblk *b = a->bins[k]; b; b = b->fnext)
            if (!clean(b) && b->sev->ctx == ctx &&
                (all || same_stream(b->stream, ctx, stream, ctx))) {
                sev_put(b->sev);
                b->sev = NULL;
                a->dirty = true;
            }
}

void sblock_each_idle(struct sarena *a, void (*fn)(uint64_t va, void *arg), void *arg)
{
    for (struct schunk *c = a->chunks; c; c = c->next)
        if (!c->nlive)
            fn(c->va, arg);
}

void sblock_stream_gone(struct sarena *a, CUstream s)
{
    for (unsigned k = 0; k < SBLOCK_BINS; k++)
        for (struct sblk *b = a->bins[k]; b; b = b->fnext)
            if (b->stream == s)
                b->stream = GONE;
}

CUresult sblock_access(struct sarena *a, uint64_t readers, uint64_t writers)
{
    CUresult rc = CUDA_SUCCESS;
    for (struct schunk *c = a->chunks; c && rc == CUDA_SUCCESS; c = c->next)
        rc = ownmem_chunk_access(c->va, readers, writers);
    if (rc == CUDA_SUCCESS) {
        a->readers = readers;
        a->writers = writers;
    }
    return rc;
}
