/* swaptable: the physical allocations fast swap can move, and what stops it.
 * Each entry is one physical allocation (cuMemCreate's handle) mapped whole
 * at one address: libvramcap's own, behind a cuMemAlloc, or the
 * application's (PyTorch's expandable segments, JAX). The application holds
 * a handle of libvramcap's making, the same across swaps; the driver's
 * handle behind it changes with each, and the wrappers translate. */
#ifndef VRAM_SHIM_SWAPTABLE_H
#define VRAM_SHIM_SWAPTABLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "gpu/cuda_api.h"

struct swaptable_entry {
    uint64_t id;   /* the handle the application knows */
    uint64_t real; /* the driver's handle now; 0 while swapped out */
    uint64_t size;
    uint64_t va;       /* where it is mapped whole; 0 when not */
    uint64_t host_off; /* where its bytes are in the host pool while swapped out */
    CUmemAllocationProp prop;
    int refs; /* the application's references (own: 0) */
    int maps; /* mappings of it */
    /* the devices given access to its mapping (bit = CUdevice), to read
     * and to write: what a resume grants again (reach.c) */
    uint64_t readers, writers;
    bool own;        /* made by libvramcap for a cuMemAlloc: it owns the range */
    bool chunk;      /* own, a chunk of a memory pool (ownpool.c) */
    bool idle;       /* a chunk nothing was allocated from at the suspend: no bytes move */
    bool odd_access; /* access given to a location that is not a device it can name */
    bool made;       /* re-created by the resume under way */
};

/* Why a process cannot be swapped fast; counted while the cause lives, or
 * for good (a handle exported to another process stays shared). */
enum swaptable_block {
    SWAPTABLE_PIECES,   /* a physical allocation mapped in part or twice */
    SWAPTABLE_EXPORTED, /* a handle exported to another process */
    SWAPTABLE_PLAIN,    /* cuMemAlloc memory the driver gave without VMM */
    SWAPTABLE_BLOCKS
};

/* An address range the application reserved (cuMemAddressReserve). */
struct swaptable_res {
    uint64_t start, size;
};

struct swaptable {
    pthread_mutex_t mu;
    struct swaptable_entry *v;
    unsigned n, cap;
    struct swaptable_res *res;
    unsigned nres, capres;
    unsigned block[SWAPTABLE_BLOCKS];
    uint64_t next_id;
};

void swaptable_init(struct swaptable *t);
void swaptable_clear(struct swaptable *t);

/* Adds an entry; -1 when out of memory. Lock held by the caller for all
 * of these: the lock guards the table between lookups and changes. */
int swaptable_add(struct swaptable *t, const struct swaptable_entry *p);
struct swaptable_entry *swaptable_by_id(struct swaptable *t, uint64_t id);
struct swaptable_entry *swaptable_by_real(struct swaptable *t, uint64_t real);
struct swaptable_entry *swaptable_by_va(struct swaptable *t, uint64_t va);
void swaptable_remove(struct swaptable *t, struct swaptable_entry *p);

/* The application's reservations: one driver call may unmap or grant
 * several mappings, but only inside one reservation. */
int swaptable_res_add(struct swaptable *t, uint64_t start, uint64_t size);
void swaptable_res_del(struct swaptable *t, uint64_t start);
/* The reservation holding va, or -1. */
long swaptable_res_of(const struct swaptable *t, uint64_t va);

/* A handle for the application that no driver handle can equal: ours are
 * tagged "vram" in the high half, the driver's are addresses. */
uint64_t swaptable_new_id(struct swaptable *t);

/* The application's handle translated to the driver's (itself if unknown). */
uint64_t swaptable_real_of(struct swaptable *t, uint64_t id);

#endif
