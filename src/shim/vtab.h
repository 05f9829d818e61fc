/* vtab: the physical allocations fast swap can move, and what stops it.
 * Each entry is one physical allocation (cuMemCreate's handle) mapped whole
 * at one address: libvramcap's own, behind a cuMemAlloc, or the
 * application's (PyTorch's expandable segments, JAX). The application holds
 * a handle of libvramcap's making, the same across swaps; the driver's
 * handle behind it changes with each, and the wrappers translate. */
#ifndef VRAM_SHIM_VTAB_H
#define VRAM_SHIM_VTAB_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "gpu/cuda_api.h"

struct vphys {
    uint64_t id;   /* the handle the application knows */
    uint64_t real; /* the driver's handle now; 0 while swapped out */
    uint64_t size;
    uint64_t va;       /* where it is mapped whole; 0 when not */
    uint64_t host_off; /* where its bytes are in the pool while swapped out */
    CUmemAllocationProp prop;
    int refs; /* the application's references (own: 0) */
    int maps; /* mappings of it */
    /* the devices given access to its mapping (bit = CUdevice), to read
     * and to write: what a resume grants again (reach.c) */
    uint64_t readers, writers;
    bool own;        /* made by libvramcap for a cuMemAlloc: it owns the range */
    bool chunk;      /* own, a chunk of a stream-ordered pool (spool.c) */
    bool idle;       /* a chunk nothing was allocated from at the suspend: no bytes move */
    bool odd_access; /* access given to a location that is not a device it can name */
    bool made;       /* re-created by the resume under way */
};

/* Why a process cannot be swapped fast; counted while the cause lives, or
 * for good (a handle exported to another process stays shared). */
enum vtab_block {
    VB_PIECES,   /* a physical allocation mapped in part or twice */
    VB_EXPORTED, /* a handle exported to another process */
    VB_PLAIN,    /* cuMemAlloc memory the driver gave without VMM */
    VB_KINDS
};

/* An address range the application reserved (cuMemAddressReserve). */
struct vres {
    uint64_t start, size;
};

struct vtab {
    pthread_mutex_t mu;
    struct vphys *v;
    unsigned n, cap;
    struct vres *res;
    unsigned nres, capres;
    unsigned block[VB_KINDS];
    uint64_t next_id;
};

void vtab_init(struct vtab *t);
void vtab_clear(struct vtab *t);

/* Adds an entry; -1 when out of memory. Lock held by the caller for all
 * of these: the lock guards the table between lookups and changes. */
int vtab_add(struct vtab *t, const struct vphys *p);
struct vphys *vtab_by_id(struct vtab *t, uint64_t id);
struct vphys *vtab_by_real(struct vtab *t, uint64_t real);
struct vphys *vtab_by_va(struct vtab *t, uint64_t va);
void vtab_remove(struct vtab *t, struct vphys *p);

/* The application's reservations: one driver call may unmap or grant
 * several mappings, but only inside one reservation. */
int vtab_res_add(struct vtab *t, uint64_t start, uint64_t size);
void vtab_res_del(struct vtab *t, uint64_t start);
/* The reservation holding va, or -1. */
long vtab_res_of(const struct vtab *t, uint64_t va);

/* A handle for the application that no driver handle can equal: ours are
 * tagged "vram" in the high half, the driver's are addresses. */
uint64_t vtab_new_id(struct vtab *t);

/* The application's handle translated to the driver's (itself if unknown). */
uint64_t vtab_real_of(struct vtab *t, uint64_t id);

#endif
