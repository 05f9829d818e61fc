/* shim: what the parts of libvramcap share: the driver entry points it
 * wraps (and the real ones behind them), the process's budget, its
 * allocation table and, with fast swap on, its table of swappable memory. */
#ifndef VRAM_SHIM_SHIM_H
#define VRAM_SHIM_SHIM_H

#include <stdbool.h>
#include <stdint.h>

#include "shim/atab.h"
#include "shim/vtab.h"
#include "gpu/cuda_api.h"
#include "ipc/group.h"

#define SHIM_EXPORT      __attribute__((visibility("default")))
#define SHIM_MAX_DEVICES 64

#define SHIM_MAX_CONTEXTS 64

struct shim {
    bool capped; /* a budget is in force (VRAM_CAP_GROUP or VRAM_CAP) */
    bool swap;   /* fast swap is on (VRAM_SWAP=1) */
    struct group group;
    struct atab atab;
    struct vtab vtab;
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

/* Takes bytes from the budget (always succeeds without a cap). */
static inline bool shim_budget_take(uint64_t bytes)
{
    return !shim.capped || group_reserve(&shim.group, bytes) == 0;
}

static inline void shim_budget_give(uint64_t bytes)
{
    if (shim.capped && bytes)
        group_release(&shim.group, bytes);
}

/* The calling thread's device, -1 without a context. */
int shim_device_now(void);

#endif
