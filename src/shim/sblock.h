/* sblock: the memory of one of libvramcap's stream-ordered pools
 * (spool.c): chunks of movable memory (ownmem_chunk) cut into blocks. A
 * block is live (handed out) or free; a free block sits in a bin by size,
 * tagged with the stream that freed it and an event recorded there at the
 * free (sev.c), until a synchronize says the free is done. The driver's
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
#ifndef VRAM_SHIM_SBLOCK_H
#define VRAM_SHIM_SBLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu/cuda_api.h"

#define SBLOCK_ALIGN 512ULL /* what an allocation is rounded to */
#define SBLOCK_BINS  48

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

struct schunk {
    uint64_t va, size;
    struct sarena *arena;
    struct sblk *first;
    struct schunk *next;
    unsigned nlive; /* blocks handed out */
};

struct sarena {
    int dev;                   /* where its memory is */
    uint64_t max;              /* what it may reserve; 0: no limit */
    uint64_t readers, writers; /* other devices that reach it (bit = CUdevice) */
    bool waits;                /* reuse across streams by waiting (internal dependencies) */
    bool dirty;                /* frees since the last settle */
    uint64_t used, reserved, used_high, reserved_high;
    struct schunk *chunks;
    struct sblk *bins[SBLOCK_BINS];
};

/* size bytes (a multiple of SBLOCK_ALIGN) handed out for stream, from a
 * free block it may take (made to wait for the block's free where it must),
 * or NULL. */
struct sblk *sblock_alloc(struct sarena *a, uint64_t size, CUstream stream);

/* A new chunk for a request of size bytes: CUDA_SUCCESS (then sblock_alloc
 * finds room), or the driver's answer. */
CUresult sblock_grow(struct sarena *a, uint64_t size);

/* b freed on stream, its free followed by sev (NULL: known done). */
void sblock_free(struct sarena *a, struct sblk *b, CUstream stream, struct sev *sev);

/* What was freed in context ctx is done: on stream, or (all) anywhere. */
void sblock_done(struct sarena *a, CUcontext ctx, bool all, CUstream stream);

/* Free blocks whose free completed (asking the driver, with ask) become
 * done, and done neighbours merge. */
void sblock_settle(struct sarena *a, bool ask);

/* Gives whole idle chunks back down to keep bytes reserved. */
void sblock_shrink(struct sarena *a, uint64_t keep);

/* fn(va) for every chunk nothing is allocated from. */
void sblock_each_idle(struct sarena *a, void (*fn)(uint64_t va, void *arg), void *arg);

/* A destroyed stream: its frees are reused after waiting, like another's. */
void sblock_stream_gone(struct sarena *a, CUstream s);

/* Who besides its own device reaches the memory, now and for new chunks. */
CUresult sblock_access(struct sarena *a, uint64_t readers, uint64_t writers);

#endif
