/* cuda_peer: peer access between contexts in the simulated libcuda.so.1.
 *
 * As the real driver documents it: cuCtxEnablePeerAccess lets the current
 * context reach the memory of the peer context's device, one way, for the
 * memory cuMemAlloc gives (past and future allocations alike) and not for
 * VMM memory, which only the devices cuMemSetAccess named may touch
 * (cuda_mem.c checks both on every copy). Every two simulated GPUs can
 * reach each other (an NVLink server). Access is kept per pair of
 * contexts, as the driver's errors need; what it lets reach counts for the
 * device, since the simulation's allocations belong to devices. */
#include <pthread.h>

#include "sim/cuda_internal.h"

#define EXPORT    SIM_EXPORT
#define MAX_PAIRS 1024 /* hardware has a limit too: TOO_MANY_PEERS past it */

struct pair {
    CUcontext from, to;
    CUdevice from_dev, to_dev;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct pair pairs[MAX_PAIRS];
static unsigned npairs;

static long find(CUcontext from, CUcontext to)
{
    for (unsigned i = 0; i < npairs; i++)
        if (pairs[i].from == from && pairs[i].to == to)
            return (long)i;
    return -1;
}

EXPORT CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!can)
        return CUDA_ERROR_INVALID_VALUE;
    if (simcu_gpu(dev) < 0 || simcu_gpu(peer) < 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *can = dev != peer;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned flags)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    CUcontext cur = simcu_current();
    CUdevice from = simcu_ctx_device(cur), to = simcu_ctx_device(peer);
    if (from < 0 || to < 0 || cur == peer)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (from == to) /* cuDeviceCanAccessPeer says no for one device */
        return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&mu);
    if (find(cur, peer) >= 0)
        rc = CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    else if (npairs == MAX_PAIRS)
        rc = CUDA_ERROR_TOO_MANY_PEERS;
    else
        pairs[npairs++] = (struct pair){cur, peer, from, to};
    pthread_mutex_unlock(&mu);
    return rc;
}

EXPORT CUresult cuCtxDisablePeerAccess(CUcontext peer)
{
    if (!simcu_ready())
        return CUDA_ERROR_NOT_INITIALIZED;
    CUcontext cur = simcu_current();
    if (simcu_ctx_device(cur) < 0 || simcu_ctx_device(peer) < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&mu);
    long i = find(cur, peer);
    if (i >= 0)
        pairs[i] = pairs[--npairs];
    pthread_mutex_unlock(&mu);
    return i >= 0 ? CUDA_SUCCESS : CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
}

bool simcu_peer_reaches(CUdevice from, CUdevice to)
{
    pthread_mutex_lock(&mu);
    bool yes = false;
    for (unsigned i = 0; i < npairs && !yes; i++)
        yes = pairs[i].from_dev == from && pairs[i].to_dev == to;
    pthread_mutex_unlock(&mu);
    return yes;
}

void simcu_peer_forget(CUcontext ctx)
{
    pthread_mutex_lock(&mu);
    for (unsigned i = npairs; i-- > 0;)
        if (pairs[i].from == ctx || pairs[i].to == ctx)
            pairs[i] = pairs[--npairs];
    pthread_mutex_unlock(&mu);
}
