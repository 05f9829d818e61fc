/* cuda_internal: what the parts of the simulated libcuda.so.1 share: the
 * process's view of devices and contexts (cuda.c), the memory ledger and
 * address ranges with who may reach them (cuda_mem.c), and peer access
 * between contexts (cuda_peer.c). */
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
enum simcu_kind { SIMCU_LINEAR, SIMCU_MANAGED, SIMCU_MAPPED, SIMCU_ARRAY };
int simcu_track(CUdeviceptr p, size_t size, size_t charged, CUdevice dev, enum simcu_kind kind);
/* Forgets the range starting at p; its charge and size out. -1 if unknown. */
int simcu_untrack(CUdeviceptr p, enum simcu_kind kind, size_t *size, size_t *charged,
                  CUdevice *dev);
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
