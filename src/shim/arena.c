/* arena: a memory pool's memory, chunks cut into blocks (see
 * arena.h). */
#include "shim/arena.h"

#include <stdlib.h>

#include "shim/driver.h"
#include "shim/freeevent.h"
#include "shim/ownmem.h"

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
    return b < ARENA_BINS ? b : ARENA_BINS - 1;
}

static void bin_add(struct arena *a, struct arena_block *b)
{
    struct arena_block **head = &a->bins[bin_of(b->size)];
    b->fprev = NULL;
    b->fnext = *head;
    if (*head)
        (*head)->fprev = b;
    *head = b;
}

static void bin_del(struct arena *a, struct arena_block *b)
{
    if (b->fprev)
        b->fprev->fnext = b->fnext;
    else
        a->bins[bin_of(b->size)] = b->fnext;
    if (b->fnext)
        b->fnext->fprev = b->fprev;
    b->fprev = b->fnext = NULL;
}

static void note_high(struct arena *a)
{
    if (a->used > a->used_high)
        a->used_high = a->used;
    if (a->reserved > a->reserved_high)
        a->reserved_high = a->reserved;
}

/* Whether a free block's free is known done. */
static bool clean(const struct arena_block *b)
{
    return b->event == NULL;
}

/* Neighbours x and y become one free block when one tag covers both:
 * either is done, or both were freed on one stream (the later event covers
 * the earlier). */
static bool mergeable(const struct arena_block *x, const struct arena_block *y)
{
    return x && y && x->free && y->free &&
           (clean(x) || clean(y) ||
            (x->event->ctx == y->event->ctx &&
             same_stream(x->stream, x->event->ctx, y->stream, y->event->ctx)));
}

/* b takes its next neighbour in; the tag kept is the later free's (b's
 * when later_is_b). Both out of their bins. */
static void absorb(struct arena_block *b, bool later_is_b)
{
    struct arena_block *n = b->next;
    if (clean(b) || (!clean(n) && !later_is_b)) {
        freeevent_put(b->event);
        b->event = n->event;
        b->stream = n->stream;
    } else {
        freeevent_put(n->event);
    }
    b->size += n->size;
    b->next = n->next;
    if (n->next)
        n->next->prev = b;
    free(n);
}

/* Puts a free block in its bin, merged with its free neighbours where a
 * tag covers both (b's free is the latest). */
static void place_free(struct arena *a, struct arena_block *b)
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
static void chunk_drop(struct arena *a, struct arena_chunk *c)
{
    bin_del(a, c->first);
    free(c->first);
    for (struct arena_chunk **q = &a->chunks; *q; q = &(*q)->next)
        if (*q == c) {
            *q = c->next;
            break;
        }
    a->reserved -= c->size;
    ownmem_chunk_free(c->va);
    free(c);
}

static bool chunk_idle(const struct arena_chunk *c)
{
    return c->first->free && c->first->size == c->size && clean(c->first);
}

void arena_settle(struct arena *a, bool ask)
{
    for (unsigned k = 0; k < ARENA_BINS; k++)
        for (struct arena_block *b = a->bins[k]; ask && b; b = b->fnext)
            if (!clean(b) && real_cuEventQuery && real_cuEventQuery(b->event->ev) == CUDA_SUCCESS) {
                freeevent_put(b->event);
                b->event = NULL;
            }
    for (struct arena_chunk *c = a->chunks; c; c = c->next)
        for (struct arena_block *b = c->first; b && b->next;)
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

void arena_shrink(struct arena *a, uint64_t keep)
{
    if (a->reserved <= keep)
        return;
    arena_settle(a, true);
    for (struct arena_chunk *c = a->chunks, *n; c && a->reserved > keep; c = n) {
        n = c->next;
        if (chunk_idle(c))
            chunk_drop(a, c);
    }
}

CUresult arena_grow(struct arena *a, uint64_t size)
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
    struct arena_chunk *c = calloc(1, sizeof *c);
    struct arena_block *b = calloc(1, sizeof *b);
    if (!c || !b) {
        free(c);
        free(b);
        ownmem_chunk_free(va);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *c = (struct arena_chunk){va, got, a, b, a->chunks, 0};
    *b = (struct arena_block){.va = va, .size = got, .chunk = c, .free = true};
    a->chunks = c;
    a->reserved += got;
    note_high(a);
    bin_add(a, b);
    if (a->readers && (rc = ownmem_chunk_access(va, a->readers, a->writers)) != CUDA_SUCCESS)
        chunk_drop(a, c); /* its peers could not reach it */
    return rc;
}

/* Hands out size bytes of b, the rest staying free with b's tag. */
static void hand_out(struct arena *a, struct arena_block *b, uint64_t size)
{
    bin_del(a, b);
    if (b->size - size >= ARENA_ALIGN) {
        struct arena_block *r = calloc(1, sizeof *r);
        if (r) {
            *r = (struct arena_block){.va = b->va + size,
                                      .size = b->size - size,
                                      .chunk = b->chunk,
                                      .prev = b,
                                      .next = b->next,
                                      .free = true,
                                      .stream = b->stream,
                                      .event = b->event};
            if (r->event)
                r->event->refs++;
            if (b->next)
                b->next->prev = r;
            b->next = r;
            b->size = size;
            bin_add(a, r);
        }
    }
    freeevent_put(b->event);
    b->event = NULL;
    b->free = false;
    b->chunk->nlive++;
    a->used += b->size;
    note_high(a);
}

struct arena_block *arena_alloc(struct arena *a, uint64_t size, CUstream stream)
{
    CUcontext ctx = NULL;
    if (legacy(stream) && real_cuCtxGetCurrent && real_cuCtxGetCurrent(&ctx) != CUDA_SUCCESS)
        ctx = NULL;
    for (unsigned k = bin_of(size); k < ARENA_BINS; k++)
        for (struct arena_block *b = a->bins[k]; b; b = b->fnext) {
            if (b->size < size)
                continue;
            bool ready = clean(b) || same_stream(b->stream, b->event->ctx, stream, ctx);
            if (!ready && !a->waits)
                continue;
            if (!ready && real_cuStreamWaitEvent(stream, b->event->ev, 0) != CUDA_SUCCESS &&
                real_cuEventSynchronize(b->event->ev) != CUDA_SUCCESS)
                continue;
            hand_out(a, b, size);
            return b;
        }
    return NULL;
}

void arena_free(struct arena *a, struct arena_block *b, CUstream stream, struct freeevent *event)
{
    a->used -= b->size;
    b->chunk->nlive--;
    b->free = true;
    b->stream = stream;
    b->event = event;
    place_free(a, b);
    a->dirty = true;
}

void arena_done(struct arena *a, CUcontext ctx, bool all, CUstream stream)
{
    for (unsigned k = 0; k < ARENA_BINS; k++)
        for (struct arena_block *b = a->bins[k]; b; b = b->fnext)
            if (!clean(b) && b->event->ctx == ctx &&
                (all || same_stream(b->stream, ctx, stream, ctx))) {
                freeevent_put(b->event);
                b->event = NULL;
                a->dirty = true;
            }
}

void arena_each_idle(struct arena *a, void (*fn)(uint64_t va, void *arg), void *arg)
{
    for (struct arena_chunk *c = a->chunks; c; c = c->next)
        if (!c->nlive)
            fn(c->va, arg);
}

void arena_stream_gone(struct arena *a, CUstream s)
{
    for (unsigned k = 0; k < ARENA_BINS; k++)
        for (struct arena_block *b = a->bins[k]; b; b = b->fnext)
            if (b->stream == s)
                b->stream = GONE;
}

CUresult arena_access(struct arena *a, uint64_t readers, uint64_t writers)
{
    CUresult rc = CUDA_SUCCESS;
    for (struct arena_chunk *c = a->chunks; c && rc == CUDA_SUCCESS; c = c->next)
        rc = ownmem_chunk_access(c->va, readers, writers);
    if (rc == CUDA_SUCCESS) {
        a->readers = readers;
        a->writers = writers;
    }
    return rc;
}
