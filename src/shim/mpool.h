/* mpool: the wrapped entry points of stream-ordered pools (the pools
 * themselves, a device's default and current pool) and the synchronizes
 * at which a pool gives memory back: with fast swap on, libvramcap's own
 * pools answer (spool.c); otherwise, and for the driver's pools, the
 * driver. */
#ifndef VRAM_SHIM_MPOOL_H
#define VRAM_SHIM_MPOOL_H

#include "gpu/cuda_api.h"

#define MPOOL_CUDA_HOOKS(X)                                                                        \
    X(cuMemPoolCreate, (CUmemoryPool * pool, const CUmemPoolProps *props))                         \
    X(cuMemPoolDestroy, (CUmemoryPool pool))                                                       \
    X(cuMemPoolTrimTo, (CUmemoryPool pool, size_t keep))                                           \
    X(cuMemPoolSetAttribute, (CUmemoryPool pool, int attr, void *value))                           \
    X(cuMemPoolGetAttribute, (CUmemoryPool pool, int attr, void *value))                           \
    X(cuMemPoolSetAccess, (CUmemoryPool pool, const CUmemAccessDesc *desc, size_t count))          \
    X(cuMemPoolGetAccess, (int *flags, CUmemoryPool pool, CUmemLocation *loc))                     \
    X(cuDeviceGetDefaultMemPool, (CUmemoryPool * pool, CUdevice dev))                              \
    X(cuDeviceGetMemPool, (CUmemoryPool * pool, CUdevice dev))                                     \
    X(cuDeviceSetMemPool, (CUdevice dev, CUmemoryPool pool))                                       \
    X(cuMemPoolExportToShareableHandle,                                                            \
      (void *out, CUmemoryPool pool, int type, unsigned long long flags))                          \
    X(cuMemPoolExportPointer, (void *data, CUdeviceptr ptr))                                       \
    X(cuStreamSynchronize, (CUstream s))                                                           \
    X(cuStreamSynchronize_ptsz, (CUstream s))                                                      \
    X(cuEventSynchronize, (CUevent e))                                                             \
    X(cuStreamDestroy_v2, (CUstream s))                                                            \
    X(cuCtxSynchronize, (void))

#endif
