/* allocs: every live allocation of this process that libvramcap counted,
 * keyed by address (or handle) and kind: what a free gives back, and the
 * bytes of each kind (fast swap refuses the kinds it cannot move). O(1)
 * per operation. */
#ifndef VRAM_SHIM_ALLOCS_H
#define VRAM_SHIM_ALLOCS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

enum allocs_kind {
    ALLOCS_LINEAR = 1, /* cuMemAlloc */
    ALLOCS_MANAGED,    /* cuMemAllocManaged */
    ALLOCS_ASYNC,      /* cuMemAllocAsync, cuMemAllocFromPoolAsync */
    ALLOCS_VMM,        /* cuMemCreate handle */
    ALLOCS_IMPORTED,   /* cuMemImportFromShareableHandle handle, charged when mapped */
    ALLOCS_ARRAY,      /* cuArrayCreate, cuArray3DCreate, cuMipmappedArrayCreate */
    ALLOCS_IPC,        /* cuIpcOpenMemHandle */
    ALLOCS_FIXED,      /* linear memory fast swap cannot move: pitched, or given without VMM */
    ALLOCS_OWNPOOL,    /* cuMemAllocAsync from libvramcap's own pools (ownpool.c): movable */
    ALLOCS_GRAPH,      /* cuMemAllocAsync while capturing: a graph's allocation node */
    ALLOCS_SHARED,     /* another process's memory opened through libvramcap's handles (share.c) */
    ALLOCS_KINDS
};

struct allocs_entry {
    uint64_t key;
    uint64_t bytes; /* what was charged to the budget */
    uint8_t kind;   /* enum allocs_kind; 0 empty, 0xff a deleted slot */
    int8_t dev;
    uint16_t pad;
    uint32_t pad2;
};

struct allocs {
    pthread_mutex_t mu;
    struct allocs_entry *v;
    size_t cap, used, live; /* used counts live and deleted slots */
    uint64_t bytes[ALLOCS_KINDS];
};

void allocs_init(struct allocs *t);
void allocs_free(struct allocs *t);

/* Adds an entry (replacing one with the same key and kind). 0 or -1. */
int allocs_put(struct allocs *t, uint64_t key, enum allocs_kind kind, uint64_t bytes, int dev);

/* Removes the entry and returns it in *out; -1 if there is none. */
int allocs_take(struct allocs *t, uint64_t key, enum allocs_kind kind, struct allocs_entry *out);

/* Looks up without removing. */
int allocs_get(struct allocs *t, uint64_t key, enum allocs_kind kind, struct allocs_entry *out);

/* Calls fn on every live entry, under the table's lock. */
void allocs_each(struct allocs *t, void (*fn)(const struct allocs_entry *e, void *arg), void *arg);

/* Empties the table (a forked child owns none of its parent's memory). */
void allocs_clear(struct allocs *t);

#endif
