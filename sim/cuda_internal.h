/* cuda_internal: what the parts of the simulated libcuda.so.1 share: the
 * process's view of devices and contexts (cuda.c), the memory ledger and
 * address ranges with who may reach them (cuda_mem.c), peer access between
 * contexts (cuda_peer.c), stream-ordered pools (cuda_pool.c) and stream
 * capture with graphs and their memory (cuda_graph.c). */
#ifndef VRAM_SIM_CUDA_INTERNAL_H
#define VRAM_SIM_CUDA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "gpu/cuda_api.h"
#include "sim/sim.h"

#define SIM_EXPORT __attribute__((visibility("default")))
#define SIM_PAGE   (2u << 20) /* the driver's allocation granularity */

/* The simulation once cuInit has run, else NULL. */
struct sim *simcu_ready(void);

/* The calling thread's device, -1 without a current context. */
CUdevice simcu_device(void);

/* The calling thread's current context, or NULL. */
CUcontext simcu_current(void);

/* The device of a live context, -1 for NULL or a released primary one. */
CUdevice simcu_ctx_device(CUcontext ctx);

/* Machine GPU index of a visible device; -1 if there is none such. */
int simcu_gpu(CUdevice dev);

/* Charges delta bytes to this process on dev's GPU in the shared ledger. A
 * positive charge that does not fit is refused with OUT_OF_MEMORY. */
CUresult simcu_charge(CUdevice dev, int64_t delta);

/* The current context's process did GPU work: what NVML's per-process
 * utilization samples report. */
void simcu_busy(void);

/* A copy of n bytes between host and device that began at t0 (a
 * CLOCK_MONOTONIC reading) ends no sooner than the current GPU's link
 * carries them (the machine file's link_mb_s): a suspend of gigabytes
 * takes the time it takes on a real card. */
void simcu_link(const struct timespec *t0, size_t n);

/* Waits while a checkpoint holds this process (locked or checkpointed),
 * as the real driver holds a locked process's CUDA calls. */
void simcu_gate(void);

/* Address ranges that copies may touch: allocations and VMM mappings. */
enum simcu_kind {
    SIMCU_LINEAR,  /* cuMemAlloc */
    SIMCU_MANAGED, /* cuMemAllocManaged */
    SIMCU_MAPPED,  /* a VMM mapping */
    SIMCU_ARRAY,
    SIMCU_POOL,  /* a stream-ordered pool's (cuda_pool.c) */
    SIMCU_GRAPH, /* a graph's allocation, while backed (cuda_graph.c) */
    SIMCU_IPC,   /* another process's, opened by cuIpcOpenMemHandle (cuda_ipc.c) */
};
int simcu_track(CUdeviceptr p, size_t size, size_t charged, CUdevice dev, enum simcu_kind kind);
/* Forgets the range starting at p; its charge and size out. -1 if unknown. */
int simcu_untrack(CUdeviceptr p, enum simcu_kind kind, size_t *size, size_t *charged,
                  CUdevice *dev);
/* A new range of kind, charged to dev; CUDA_SUCCESS or OUT_OF_MEMORY. */
CUresult simcu_linear_alloc(CUdeviceptr *dptr, size_t size, CUdevice dev, enum simcu_kind kind);
/* Gives the range of kind starting at p back (unmapped, uncharged): 0, or
 * -1 when there is none. */
int simcu_linear_release(CUdeviceptr p, enum simcu_kind kind);
/* The cuMemAlloc allocation starting at p, made shareable with other
 * processes (a memfd): 0 with its descriptor, size and device, or -1. */
int simcu_share(CUdeviceptr p, int *fd, size_t *size, CUdevice *dev);

/* cuda_pool.c: a live pool allocation at p freed (0), or -1 if p is none;
 * what pools hold past their release threshold given back (a synchronize). */
int simcu_pool_free(CUdeviceptr p);
void simcu_pools_settle(void);

/* cuda_graph.c: whether stream s is capturing (1), not (0), or may not be
 * used now (-1: the legacy stream while another captures); an allocation
 * node's memory on dev for the capture of s; a free of a graph's
 * allocation, captured (s capturing) or not (s NULL: NOT_FOUND if p is no
 * graph's). */
int simcu_capturing(CUstream s);
/* A call the driver does not allow on a capturing stream s: its capture is
 * lost (1), or s does not capture (0). */
int simcu_capture_forbid(CUstream s);
CUresult simcu_graph_alloc(CUdeviceptr *dptr, size_t size, CUdevice dev, CUstream s);
CUresult simcu_graph_free(CUdeviceptr p, CUstream s);

/* Work a stream does (or a graph records): a memset of n elements of
 * elsize bytes, or a copy of n bytes. */
struct simcu_op {
    enum { SIMCU_OP_MEMSET, SIMCU_OP_DTOD, SIMCU_OP_HTOD, SIMCU_OP_DTOH } kind;
    CUdeviceptr dst, src;
    void *hdst;
    const void *hsrc;
    size_t n;
    unsigned value, elsize;
};
/* cuda_stream.c: does op now. */
CUresult simcu_run_op(const struct simcu_op *op);
/* cuda_graph.c: records op when s is capturing (1, with *rc), else 0; an
 * event recorded on s (in a capture or not), and a stream waiting on one
 * (it joins the event's capture: 1 when there was one). */
int simcu_capture_op(CUstream s, const struct simcu_op *op, CUresult *rc);
void simcu_capture_record(CUevent ev, CUstream s);
int simcu_capture_join(CUstream s, CUevent ev);

/* Whether the current context's device may read (or write) n bytes at p:
 * CUDA_SUCCESS; INVALID_VALUE outside every range; ILLEGAL_ADDRESS where
 * the device may not reach the memory; INVALID_CONTEXT without a context. */
CUresult simcu_reach(CUdeviceptr p, size_t n, bool write);
/* cuMemSetAccess on the VMM mappings that tile [p, p+n) whole: each desc
 * (devices already checked) sets that device's access. 0, or -1 with
 * nothing changed. */
int simcu_grant(CUdeviceptr p, size_t n, const CUmemAccessDesc *desc, size_t count);

/* Whether a context on device from enabled peer access to one on to. */
bool simcu_peer_reaches(CUdevice from, CUdevice to);
/* A context going away takes its peer access, both ways, with it. */
void simcu_peer_forget(CUcontext ctx);

static inline size_t simcu_round(size_t n)
{
    return (n + SIM_PAGE - 1) & ~(size_t)(SIM_PAGE - 1);
}

#endif
