/* sev: the events libvramcap's pools record at each free (spool.c): a free
 * block waits for its event before another stream may reuse it. An event
 * is shared by the blocks one free covers (counted), and once none uses it
 * goes back to a cache for the next free in its context. */
#ifndef VRAM_SHIM_SEV_H
#define VRAM_SHIM_SEV_H

#include "gpu/cuda_api.h"

struct sev {
    CUevent ev;
    CUcontext ctx; /* where it was made, and may be recorded */
    int refs;
    struct sev *next; /* in the cache */
};

/* An event of the current context (one reference), or NULL. */
struct sev *sev_get(void);

/* One reference less (s may be NULL). */
void sev_put(struct sev *s);

/* A forked child's events are not its own. */
void sev_after_fork(void);

#endif
