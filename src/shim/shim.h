/* shim: what the parts of libvramcap share: the driver entry points it
 * wraps (and the real ones behind them), the process's budget on each GPU,
 * its allocation table and, with fast swap on, its table of swappable
 * memory. */
#ifndef VRAM_SHIM_SHIM_H
#define VRAM_SHIM_SHIM_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu/cuda_api.h"
#include "shim/allocs.h"
#include "shim/budget.h"
#include "shim/swaptable.h"

#define SHIM_EXPORT      __attribute__((visibility("default")))
#define SHIM_MAX_DEVICES BUDGET_MAX_DEVICES

#define SHIM_MAX_CONTEXTS 64

struct shim {
    bool capped;          /* a budget is in force (VRAM_CAP_GROUP or VRAM_CAP) */
    bool swap;            /* fast swap is on (VRAM_SWAP=1) */
    struct budget budget; /* a group per GPU */
    struct allocs allocs;
    struct swaptable swaptable;
    pthread_mutex_t ctx_mu;
    uint64_t ctx_charged[SHIM_MAX_DEVICES];
    CUcontext ctx[SHIM_MAX_CONTEXTS]; /* contexts made with cuCtxCreate */
    CUdevice ctx_dev[SHIM_MAX_CONTEXTS];
    unsigned nctx;
    bool primary_used[SHIM_MAX_DEVICES];
};

extern struct shim shim;

#define SHIM_PAGE (2ULL << 20) /* the driver's allocation granularity */

static inline uint64_t shim_pages(uint64_t n)
{
    return n > UINT64_MAX - SHIM_PAGE ? UINT64_MAX : (n + SHIM_PAGE - 1) & ~(SHIM_PAGE - 1);
}

/* Takes bytes from device dev's budget (always succeeds without a cap). A
 * device the process has no slice on takes nothing: it is refused, and
 * told why once. */
static inline bool shim_budget_take(int dev, uint64_t bytes)
{
    if (!shim.capped || bytes == 0)
        return true;
    struct group *g = budget_of(&shim.budget, dev);
    if (!g) {
        budget_refused(&shim.budget, dev);
        return false;
    }
    return group_reserve(g, bytes) == 0;
}

static inline void shim_budget_give(int dev, uint64_t bytes)
{
    struct group *g;
    if (shim.capped && bytes && (g = budget_of(&shim.budget, dev)))
        group_release(g, bytes);
}

/* A free gives back what its allocation charged, under whichever of kinds
 * it was recorded, to the device it was charged to, whatever is current. */
void shim_give_back(uint64_t key, const enum allocs_kind *kinds, size_t nkinds);

/* The calling thread's device, -1 without a context. */
int shim_device_now(void);

#endif
