/* hostpool: the pinned host memory fast swap copies into, owned by the
 * daemon and shared by its models: one memfd of a fixed size, populated
 * once in the background when the daemon starts, mapped and registered
 * with the driver once by each model (libvramcap, VRAM_SWAP_POOL_FD), and
 * cut into one window per suspended model (in pieces when no hole of the
 * pool holds it whole). So the first suspend of a model
 * is as fast as the tenth, and the pinned memory of all suspended models
 * together never passes the pool's size. */
#ifndef VRAM_DAEMON_HOSTPOOL_H
#define VRAM_DAEMON_HOSTPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc/swapline.h"

#define HOSTPOOL_MAX_WINDOWS 128
#define HOSTPOOL_ALIGN       (2ULL << 20)

/* A piece of an owner's window: the seq-th, counting in the order the
 * owner fills them. */
struct hostpool_window {
    uint64_t off, len;
    unsigned owner, seq;
};

/* The pieces, in order of offset. */
struct hostpool_map {
    uint64_t size;
    struct hostpool_window w[HOSTPOOL_MAX_WINDOWS];
    unsigned n;
};

/* A window of n bytes (rounded up to HOSTPOOL_ALIGN) for owner in *w: the
 * smallest free hole that holds it whole, else pieces of the largest
 * holes (at most SWAPLINE_MAX_EXTENTS). 0, or -1 when the free space is
 * short. An owner has one window: a second take gives the first back
 * first. */
int hostpool_take(struct hostpool_map *m, unsigned owner, uint64_t n, struct swapline_window *w);

/* Shrinks owner's window to its first n bytes (rounded up); 0 gives it
 * back. */
void hostpool_shrink(struct hostpool_map *m, unsigned owner, uint64_t n);

/* Gives owner's window back (nothing if it has none). */
void hostpool_give(struct hostpool_map *m, unsigned owner);

/* Bytes in windows now. */
uint64_t hostpool_used(const struct hostpool_map *m);

struct hostpool {
    int fd;
    struct hostpool_map map;
};

/* A pool of size bytes (rounded up), its memory populated by a thread of
 * its own that says how far it got on stderr: 0, or -1 with err. */
int hostpool_open(struct hostpool *p, uint64_t size, char *err, size_t len);

#endif
