/* arena: the memory of one of libvramcap's memory pools
 * (ownpool.c): chunks of movable memory (ownmem_chunk) cut into blocks. A
 * block is live (handed out) or free; a free block sits in a bin by size,
 * tagged with the stream that freed it and an event recorded there at the
 * free (freeevent.c), until a synchronize says the free is done. The driver's
 * rules for reuse:
 *   - on the stream that freed it, at once: the stream's order is enough;
 *   - on another stream once the free is known done, with nothing to wait
 *     for;
 *   - otherwise after making the stream wait for the event (the pool's
 *     "internal dependencies", on by default; with them off such a block
 *     is passed over).
 * Small requests share 2 MiB chunks, middling ones 20 MiB chunks, large
 * ones get a chunk of their size; neighbouring free blocks merge when one
 * tag covers both; whole chunks nothing uses go back to the driver when
 * the pool shrinks. No lock of its own: the pool's. */
#ifndef VRAM_SHIM_ARENA_H
#define VRAM_SHIM_ARENA_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu/cuda_api.h"

#define ARENA_ALIGN 512ULL /* what an allocation is rounded to */
#define ARENA_BINS  48

struct arena_chunk;

struct arena_block {
    uint64_t va, size;
    struct arena_chunk *chunk;
    struct arena_block *prev, *next;   /* neighbours in the chunk, by address */
    struct arena_block *fprev, *fnext; /* in its bin, while free */
    bool free;
    CUstream stream;         /* free: freed on it */
    struct freeevent *event; /* free: its free's event; NULL once known done */
};

struct arena_chunk {
    uint64_t va, size;
    struct arena *arena;
    struct arena_block *first;
    struct arena_chunk *next;
    unsigned nlive; /* blocks handed out */
};

struct arena {
    int dev;                   /* where its memory is */
    uint64_t max;              /* what it may reserve; 0: no limit */
    uint64_t readers, writers; /* other devices that reach it (bit = CUdevice) */
    bool waits;                /* reuse across streams by waiting (internal dependencies) */
    bool dirty;                /* frees since the last settle */
    uint64_t used, reserved, used_high, reserved_high;
    struct arena_chunk *chunks;
    struct arena_block *bins[ARENA_BINS];
};

/* size bytes (a multiple of ARENA_ALIGN) handed out for stream, from a
 * free block it may take (made to wait for the block's free where it must),
 * or NULL. */
struct arena_block *arena_alloc(struct arena *a, uint64_t size, CUstream stream);

/* A new chunk for a request of size bytes: CUDA_SUCCESS (then arena_alloc
 * finds room), or the driver's answer. */
CUresult arena_grow(struct arena *a, uint64_t size);

/* b freed on stream, its free followed by event (NULL: known done). */
void arena_free(struct arena *a, struct arena_block *b, CUstream stream, struct freeevent *event);

/* What was freed in context ctx is done: on stream, or (all) anywhere. */
void arena_done(struct arena *a, CUcontext ctx, bool all, CUstream stream);

/* Free blocks whose free completed (asking the driver, with ask) become
 * done, and done neighbours merge. */
void arena_settle(struct arena *a, bool ask);

/* Gives whole idle chunks back down to keep bytes reserved. */
void arena_shrink(struct arena *a, uint64_t keep);

/* fn(va) for every chunk nothing is allocated from. */
void arena_each_idle(struct arena *a, void (*fn)(uint64_t va, void *arg), void *arg);

/* A destroyed stream: its frees are reused after waiting, like another's. */
void arena_stream_gone(struct arena *a, CUstream s);

/* Who besides its own device reaches the memory, now and for new chunks. */
CUresult arena_access(struct arena *a, uint64_t readers, uint64_t writers);

#endif
