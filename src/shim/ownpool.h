/* ownpool: libvramcap's own memory pools (CUDA's stream-ordered pools),
 * under fast swap. Each pool
 * the program gets (a device's default, or one of cuMemPoolCreate's) is
 * libvramcap's, behind the handle of an empty pool of the driver's (so the
 * runtime's checks of a handle hold); its memory is chunks of the VMM
 * memory fast swap moves (ownmem.c), handed out in pieces in stream order,
 * so the driver never holds a pool's memory and a suspend moves it out and
 * back at the same addresses with the pool's bookkeeping untouched. Pools
 * the program makes exportable to other processes, and every allocation
 * made while a stream captures a graph, stay the driver's. */
#ifndef VRAM_SHIM_OWNPOOL_H
#define VRAM_SHIM_OWNPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/cuda_api.h"
#include "shim/allocs.h"

/* cuMemAllocAsync (has_pool false: the stream's device's current pool)
 * and cuMemAllocFromPoolAsync, the _ptsz variants with ptsz. *kind says
 * whose memory it is: ALLOCS_OWNPOOL (ours), ALLOCS_ASYNC (a pool of the
 * driver's), ALLOCS_GRAPH (an allocation node of a capture). */
CUresult ownpool_alloc(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, bool has_pool,
                       CUstream stream, bool ptsz, enum allocs_kind *kind);

/* cuMemFreeAsync: ours goes back to its pool in stream order; the rest is
 * the driver's. */
CUresult ownpool_free(CUdeviceptr p, CUstream stream, bool ptsz);

/* cuMemFree of pool memory (the driver's is synchronous): 1 and *rc when
 * p is ours, else 0. */
int ownpool_free_now(CUdeviceptr p, CUresult *rc);

/* Whether h is one of libvramcap's pools; whether p is memory one of
 * them handed out. */
bool ownpool_ours(CUmemoryPool h);
bool ownpool_has(CUdeviceptr p);

/* The pool entry points for our pools (ownpool_ours), each as the driver
 * documents it. */
CUresult ownpool_create(CUmemoryPool *out, const CUmemPoolProps *props);
CUresult ownpool_destroy(CUmemoryPool h);
CUresult ownpool_trim(CUmemoryPool h, size_t keep);
CUresult ownpool_set_attr(CUmemoryPool h, int attr, const void *value);
CUresult ownpool_get_attr(CUmemoryPool h, int attr, void *value);
CUresult ownpool_set_access(CUmemoryPool h, const CUmemAccessDesc *desc, size_t count);
CUresult ownpool_get_access(int *flags, CUmemoryPool h, const CUmemLocation *loc);
/* A device's default pool (ours), and its current pool (ours, or a
 * driver's the program set). */
CUresult ownpool_default(CUmemoryPool *out, CUdevice dev);
CUresult ownpool_current(CUmemoryPool *out, CUdevice dev);
/* Sets dev's current pool: ours, or (driver) one of the driver's. */
CUresult ownpool_set_current(CUdevice dev, CUmemoryPool h, bool driver);

/* A synchronize returned: what was freed before it on that stream (of the
 * current context), or anywhere in the current context, is done, or
 * nothing is known (an event's); and pools past their release threshold
 * give memory back, as the driver's do. */
enum ownpool_sync { OWNPOOL_SYNC_STREAM, OWNPOOL_SYNC_CONTEXT, OWNPOOL_SYNC_OTHER };
void ownpool_synced(enum ownpool_sync what, CUstream stream);

/* Calls fn with the address of every chunk nothing is allocated from (a
 * suspend moves no bytes of those). Only while every thread waits at the
 * gate: the caller may hold the swap table's lock. */
void ownpool_each_idle(void (*fn)(uint64_t va, void *arg), void *arg);

/* A stream destroyed: its handle may come back for another, which must
 * not take what it freed without waiting. */
void ownpool_stream_gone(CUstream s);

/* A forked child owns none of it. */
void ownpool_after_fork(void);

#endif
