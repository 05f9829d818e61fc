/* peer: the pairs of contexts that enabled peer access (see peer.h). The
 * pairs are kept so that disabling one of two that open the same devices
 * keeps the access. A context destroyed without disabling leaves its pair
 * behind: its device keeps access to the peer's allocations, which costs
 * nothing and breaks nothing. The pairs are guarded by the swap table's
 * lock, as reach.c's matrix is. */
#include "shim/peer.h"

#include <pthread.h>
#include <string.h>

#include "shim/driver.h"
#include "shim/gate.h"
#include "shim/reach.h"
#include "shim/shim.h"

#define MAX_PAIRS 256

struct pair {
    CUcontext from, to;
    int from_dev, to_dev;
};

static struct pair pairs[MAX_PAIRS];
static unsigned npairs;
static bool pairs_lost; /* more pairs than kept: access is never taken back */

static bool dev_ok(int dev)
{
    return dev >= 0 && dev < SHIM_MAX_DEVICES;
}

static void forget_all(void)
{
    /* a forked child has no contexts */
    npairs = 0;
    pairs_lost = false;
}

__attribute__((constructor)) static void peer_start(void)
{
    pthread_atfork(NULL, NULL, forget_all);
}

/* The device of a context that is not current: made current a moment. */
static int ctx_device(CUcontext ctx)
{
    CUcontext cur = NULL;
    CUdevice dev = -1;
    if (!real_cuCtxGetCurrent || !real_cuCtxSetCurrent || !real_cuCtxGetDevice ||
        real_cuCtxGetCurrent(&cur) != CUDA_SUCCESS)
        return -1;
    if (real_cuCtxSetCurrent(ctx) != CUDA_SUCCESS || real_cuCtxGetDevice(&dev) != CUDA_SUCCESS)
        dev = -1;
    real_cuCtxSetCurrent(cur);
    return dev;
}

/* The driver said yes: the current context now reaches peer's memory, so
 * its device must reach libvramcap's allocations on peer's device too. If
 * that cannot be given, the driver's yes is taken back: an application
 * told no copies another way, one told yes would fault. */
SHIM_EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned flags)
{
    GATE_SCOPE();
    if (!REAL(cuCtxEnablePeerAccess))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real_cuCtxEnablePeerAccess(peer, flags);
    if (rc != CUDA_SUCCESS || !shim.swap)
        return rc;
    CUcontext cur = NULL;
    int from = shim_device_now(), to = ctx_device(peer);
    if (!dev_ok(from) || !dev_ok(to) || !real_cuCtxGetCurrent ||
        real_cuCtxGetCurrent(&cur) != CUDA_SUCCESS) {
        REAL(cuCtxDisablePeerAccess)(peer);
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    if (from == to) /* a device always reaches its own memory */
        return rc;
    pthread_mutex_lock(&shim.swaptable.mu);
    bool added = npairs < MAX_PAIRS;
    if (added)
        pairs[npairs++] = (struct pair){cur, peer, from, to};
    else
        pairs_lost = true;
    if (!reach_has(from, to) && (rc = reach_set(from, to, true)) != CUDA_SUCCESS) {
        reach_set(from, to, false);
        npairs -= added;
    }
    pthread_mutex_unlock(&shim.swaptable.mu);
    if (rc != CUDA_SUCCESS)
        REAL(cuCtxDisablePeerAccess)(peer);
    return rc;
}

SHIM_EXPORT CUresult cuCtxDisablePeerAccess(CUcontext peer)
{
    GATE_SCOPE();
    if (!REAL(cuCtxDisablePeerAccess))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real_cuCtxDisablePeerAccess(peer);
    CUcontext cur = NULL;
    if (rc != CUDA_SUCCESS || !shim.swap || !real_cuCtxGetCurrent ||
        real_cuCtxGetCurrent(&cur) != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&shim.swaptable.mu);
    for (unsigned i = 0; i < npairs; i++) {
        if (pairs[i].from != cur || pairs[i].to != peer)
            continue;
        struct pair gone = pairs[i];
        pairs[i] = pairs[--npairs];
        bool still = pairs_lost;
        for (unsigned k = 0; k < npairs; k++)
            still |= pairs[k].from_dev == gone.from_dev && pairs[k].to_dev == gone.to_dev;
        /* a revoke the driver refuses leaves access that is never used */
        if (!still)
            reach_set(gone.from_dev, gone.to_dev, false);
        break;
    }
    pthread_mutex_unlock(&shim.swaptable.mu);
    return rc;
}
