/* atab: every live allocation of this process that libvramcap counted,
 * keyed by address (or handle) and kind: what a free gives back, and later
 * the map of what to move out of VRAM and back. O(1) per operation. */
#ifndef VRAM_SHIM_ATAB_H
#define VRAM_SHIM_ATAB_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

enum atab_kind {
    ATAB_LINEAR = 1, /* cuMemAlloc */
    ATAB_MANAGED,    /* cuMemAllocManaged */
    ATAB_ASYNC,      /* cuMemAllocAsync, cuMemAllocFromPoolAsync */
    ATAB_VMM,        /* cuMemCreate handle */
    ATAB_IMPORTED,   /* cuMemImportFromShareableHandle handle, charged when mapped */
    ATAB_ARRAY,      /* cuArrayCreate, cuArray3DCreate, cuMipmappedArrayCreate */
    ATAB_IPC,        /* cuIpcOpenMemHandle */
    ATAB_FIXED,      /* linear memory fast swap cannot move: pitched, or given without VMM */
    ATAB_POOL,       /* cuMemAllocAsync from libvramcap's own pools (spool.c): movable */
    ATAB_GRAPH,      /* cuMemAllocAsync while capturing: a graph's allocation node */
    ATAB_SHARED,     /* another process's memory opened through libvramcap's handles (share.c) */
    ATAB_KINDS
};

struct atab_entry {
    uint64_t key;
    uint64_t bytes; /* what was charged to the budget */
    uint8_t kind;   /* enum atab_kind; 0 empty, 0xff a deleted slot */
    int8_t dev;
    uint16_t pad;
    uint32_t pad2;
};

struct atab {
    pthread_mutex_t mu;
    struct atab_entry *v;
    size_t cap, used, live; /* used counts live and deleted slots */
    uint64_t bytes[ATAB_KINDS];
};

void atab_init(struct atab *t);
void atab_free(struct atab *t);

/* Adds an entry (replacing one with the same key and kind). 0 or -1. */
int atab_put(struct atab *t, uint64_t key, enum atab_kind kind, uint64_t bytes, int dev);

/* Removes the entry and returns it in *out; -1 if there is none. */
int atab_take(struct atab *t, uint64_t key, enum atab_kind kind, struct atab_entry *out);

/* Looks up without removing. */
int atab_get(struct atab *t, uint64_t key, enum atab_kind kind, struct atab_entry *out);

/* Calls fn on every live entry, under the table's lock. */
void atab_each(struct atab *t, void (*fn)(const struct atab_entry *e, void *arg), void *arg);

/* Empties the table (a forked child owns none of its parent's memory). */
void atab_clear(struct atab *t);

#endif
