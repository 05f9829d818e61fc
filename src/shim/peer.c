/* peer: the peer matrix and each allocation's access. cuCtxEnablePeerAccess
 * is per pair of contexts, and VMM access per device: the pairs are kept
 * (so that disabling one of two that open the same devices keeps the
 * access), and reach[B] says which devices' contexts may reach B's memory.
 * A context destroyed without disabling leaves its pair behind: its device
 * keeps access to the peer's allocations, which costs nothing and breaks
 * nothing. Everything here is guarded by the swap table's lock, taken
 * around each driver call that changes access, so that an allocation made
 * meanwhile cannot miss a grant. */
#include "shim/peer.h"

#include <pthread.h>
#include <string.h>

#include "shim/gate.h"
#include "shim/hook.h"
#include "shim/shim.h"

#define MAX_PAIRS 256

struct pair {
    CUcontext from, to;
    int from_dev, to_dev;
};

static struct pair pairs[MAX_PAIRS];
static unsigned npairs;
static bool pairs_lost; /* more pairs than kept: access is never taken back */
static uint64_t reach[SHIM_MAX_DEVICES];

static bool dev_ok(int dev)
{
    return dev >= 0 && dev < SHIM_MAX_DEVICES;
}

static void forget_all(void)
{
    /* a forked child has no contexts */
    npairs = 0;
    pairs_lost = false;
    memset(reach, 0, sizeof reach);
}

__attribute__((constructor)) static void peer_start(void)
{
    pthread_atfork(NULL, NULL, forget_all);
}

void peer_note(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    for (unsigned i = 0; i < shim.vtab.n; i++) {
        struct vphys *p = &shim.vtab.v[i];
        if (!p->va || p->va >= ptr + size || p->va + p->size <= ptr)
            continue;
        for (size_t k = 0; k < count; k++) {
            int id = desc[k].location.id;
            if (desc[k].location.type != 1 || !dev_ok(id)) {
                p->odd_access = true;
                continue;
            }
            uint64_t bit = 1ULL << id;
            p->readers = desc[k].flags & 1 ? p->readers | bit : p->readers & ~bit;
            p->writers = desc[k].flags & 2 ? p->writers | bit : p->writers & ~bit;
        }
    }
}

void peer_own_access(struct vphys *p)
{
    int dev = p->prop.location.id;
    p->readers = p->writers = dev_ok(dev) ? (1ULL << dev) | reach[dev] : 0;
}

CUresult peer_grant(const struct vphys *p)
{
    CUmemAccessDesc d[SHIM_MAX_DEVICES];
    size_t n = 0;
    int own = p->prop.location.id;
    for (int dev = 0; dev < SHIM_MAX_DEVICES; dev++) {
        uint64_t bit = 1ULL << dev;
        int flags = (p->readers & bit ? 1 : 0) | (p->writers & bit ? 2 : 0);
        if (dev == own)
            flags = 3;
        if (flags)
            d[n++] = (CUmemAccessDesc){{1, dev}, flags};
    }
    return real_cuMemSetAccess(p->va, p->size, d, n);
}

/* Opens (or closes) from's access to every allocation of libvramcap's on
 * to, mapped or swapped out (a resume grants what is recorded). The first
 * error, after trying them all. */
static CUresult set_reach(int from, int to, bool open)
{
    uint64_t bit = 1ULL << from;
    reach[to] = open ? reach[to] | bit : reach[to] & ~bit;
    CUresult rc = CUDA_SUCCESS;
    for (unsigned i = 0; i < shim.vtab.n; i++) {
        struct vphys *p = &shim.vtab.v[i];
        bool has = (p->readers & bit) != 0;
        if (!p->own || p->prop.location.id != to || has == open)
            continue;
        p->readers = open ? p->readers | bit : p->readers & ~bit;
        p->writers = open ? p->writers | bit : p->writers & ~bit;
        CUmemAccessDesc d = {{1, from}, open ? 3 : 0};
        CUresult r = p->real && p->va ? real_cuMemSetAccess(p->va, p->size, &d, 1) : CUDA_SUCCESS;
        if (rc == CUDA_SUCCESS)
            rc = r;
    }
    return rc;
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
    pthread_mutex_lock(&shim.vtab.mu);
    bool added = npairs < MAX_PAIRS;
    if (added)
        pairs[npairs++] = (struct pair){cur, peer, from, to};
    else
        pairs_lost = true;
    if (!(reach[to] & (1ULL << from)) && (rc = set_reach(from, to, true)) != CUDA_SUCCESS) {
        set_reach(from, to, false);
        npairs -= added;
    }
    pthread_mutex_unlock(&shim.vtab.mu);
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
    pthread_mutex_lock(&shim.vtab.mu);
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
            set_reach(gone.from_dev, gone.to_dev, false);
        break;
    }
    pthread_mutex_unlock(&shim.vtab.mu);
    return rc;
}
