/* peer: who may reach fast swap's memory. With fast swap on, cuMemAlloc's
 * memory is VMM memory, which cuCtxEnablePeerAccess does not open to other
 * GPUs the way it opens the driver's own: libvramcap keeps which devices'
 * contexts enabled peer access to which devices' memory, and grants them
 * (cuMemSetAccess) each of its allocations on those devices, now and as
 * they are made. The access every physical allocation was given, by
 * libvramcap or by the application, is recorded on its swap table entry,
 * so that a resume grants exactly that again. */
#ifndef VRAM_SHIM_PEER_H
#define VRAM_SHIM_PEER_H

#include <stddef.h>

#include "gpu/cuda_api.h"
#include "shim/vtab.h"

#define PEER_CUDA_HOOKS(X)                                                                         \
    X(cuCtxEnablePeerAccess, (CUcontext peer, unsigned flags))                                     \
    X(cuCtxDisablePeerAccess, (CUcontext peer))

/* The application gave access (cuMemSetAccess succeeded): recorded on
 * every entry mapped in [ptr, ptr+size). Table locked. */
void peer_note(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count);

/* A new allocation of libvramcap's on its own device: reachable from that
 * device and from every device whose contexts enabled peer access to it.
 * Sets p's access; peer_grant gives it. Table locked. */
void peer_own_access(struct vphys *p);

/* Grants p, mapped at p->va, the access it records, in one driver call;
 * its own device always, which copies back need. Table locked. */
CUresult peer_grant(const struct vphys *p);

#endif
