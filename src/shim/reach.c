/* reach: which devices may reach fast swap's memory (see reach.h).
 * reach[B] says which devices' contexts may reach B's memory. Everything
 * here is guarded by the swap table's lock, taken around each driver call
 * that changes access, so that an allocation made meanwhile cannot miss a
 * grant. */
#include "shim/reach.h"

#include <pthread.h>
#include <string.h>

#include "shim/driver.h"
#include "shim/shim.h"

static uint64_t reach[SHIM_MAX_DEVICES];

static bool dev_ok(int dev)
{
    return dev >= 0 && dev < SHIM_MAX_DEVICES;
}

static void forget_all(void)
{
    /* a forked child has no contexts */
    memset(reach, 0, sizeof reach);
}

__attribute__((constructor)) static void reach_start(void)
{
    pthread_atfork(NULL, NULL, forget_all);
}

bool reach_has(int from, int to)
{
    return reach[to] & (1ULL << from);
}

void reach_note(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    for (unsigned i = 0; i < shim.swaptable.n; i++) {
        struct swaptable_entry *p = &shim.swaptable.v[i];
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

void reach_own(struct swaptable_entry *p)
{
    int dev = p->prop.location.id;
    p->readers = p->writers = dev_ok(dev) ? (1ULL << dev) | reach[dev] : 0;
}

CUresult reach_grant(const struct swaptable_entry *p)
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

CUresult reach_set(int from, int to, bool open)
{
    uint64_t bit = 1ULL << from;
    reach[to] = open ? reach[to] | bit : reach[to] & ~bit;
    CUresult rc = CUDA_SUCCESS;
    for (unsigned i = 0; i < shim.swaptable.n; i++) {
        struct swaptable_entry *p = &shim.swaptable.v[i];
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
