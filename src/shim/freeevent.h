/* freeevent: the events libvramcap's pools record at each free (ownpool.c): a free
 * block waits for its event before another stream may reuse it. An event
 * is shared by the blocks one free covers (counted), and once none uses it
 * goes back to a cache for the next free in its context. */
#ifndef VRAM_SHIM_FREEEVENT_H
#define VRAM_SHIM_FREEEVENT_H

#include "gpu/cuda_api.h"

struct freeevent {
    CUevent ev;
    CUcontext ctx; /* where it was made, and may be recorded */
    int refs;
    struct freeevent *next; /* in the cache */
};

/* An event of the current context (one reference), or NULL. */
struct freeevent *freeevent_get(void);

/* One reference less (s may be NULL). */
void freeevent_put(struct freeevent *s);

/* A forked child's events are not its own. */
void freeevent_after_fork(void);

#endif
