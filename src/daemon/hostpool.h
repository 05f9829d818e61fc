/* hostpool: the pinned host memory fast swap copies into, owned by the
 * daemon and shared by its models: one memfd of a fixed size, populated
 * once in the background when the daemon starts, mapped and registered
 * with the driver once by each model (libvramcap, VRAM_SWAP_POOL_FD), and
 * cut into one window per suspended model. So the first suspend of a model
 * is as fast as the tenth, and the pinned memory of all suspended models
 * together never passes the pool's size. */
#ifndef VRAM_DAEMON_HOSTPOOL_H
#define VRAM_DAEMON_HOSTPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HOSTPOOL_MAX_WINDOWS 64
#define HOSTPOOL_ALIGN       (2ULL << 20)

struct hostpool_window {
    uint64_t off, len;
    unsigned owner;
};

/* The windows, in order of offset. */
struct hostpool_map {
    uint64_t size;
    struct hostpool_window w[HOSTPOOL_MAX_WINDOWS];
    unsigned n;
};

/* A window of at least n bytes (rounded up to HOSTPOOL_ALIGN) for owner,
 * the lowest that fits: 0 with *off and *len, or -1 when none does. An
 * owner has one window: a second take gives the first back first. */
int hostpool_take(struct hostpool_map *m, unsigned owner, uint64_t n, uint64_t *off,
                  uint64_t *len);

/* Shrinks owner's window to n bytes (rounded up); 0 gives it back. */
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
