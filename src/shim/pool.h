/* pool: the pinned host memory a swapped-out process's bytes go to.
 * Copies run at PCIe line rate only into pinned memory, and pinning 16 GiB
 * at swap time costs seconds, so the pool is kept between swaps (policy
 * "keep", the default), given back at each resume ("none"), or grown ahead
 * of the first swap ("eager", by the control thread once allocations have
 * settled). Regions are populated by several threads with huge pages, then
 * registered with the driver.
 *
 * Under `vram serve` the pool is the daemon's instead ("shared"): one
 * memfd for all models, populated once by the daemon, mapped here from
 * VRAM_SWAP_POOL_FD and registered with the driver once, in the
 * background; each suspend is given its window in it, so that the pinned
 * memory of all suspended models together stays within the daemon's
 * host_budget and a first suspend pins nothing. */
#ifndef VRAM_SHIM_POOL_H
#define VRAM_SHIM_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc/swapline.h"

enum pool_policy { POOL_KEEP, POOL_NONE, POOL_EAGER };

/* Reads VRAM_SWAP_POOL and VRAM_SWAP_HOST_MAX (a size: the most pinned
 * memory this process may hold). 0, or -1 with err for a bad value. */
int pool_setup(char *err, size_t len);
enum pool_policy pool_policy(void);

/* The daemon's pool is the pool (mapped, or still to come by pool_offer). */
bool pool_shared(void);

/* A descriptor passed along with a request (the daemon's, SCM_RIGHTS):
 * mapped as the daemon's pool if this process was given one it could not
 * open, and it is that pool; closed in every case. */
void pool_offer(int fd);

/* Registers the shared pool with the driver (a context must be current):
 * once, the first call pays for it. 0, or -1 with err. */
int pool_register(char *err, size_t len);

/* The shared pool is registered. */
bool pool_ready(void);

/* The next placement pass uses w's pieces of the shared pool only, in
 * order. 0, or -1 with err when one lies outside. */
int pool_window(const struct swapline_window *w, char *err, size_t errlen);

/* Bytes pinned now by this process for itself (the shared pool is the
 * daemon's: 0). */
uint64_t pool_bytes(void);

/* Starts a placement pass: every byte of the pool is free again. */
void pool_begin(void);

/* A place for n bytes of pinned memory from the pass, in *pos (for
 * pool_at), growing the pool by at least want bytes when nothing left
 * fits (want >= n). 0, or -1 with err when host RAM or the limit says no,
 * the window is full, or the driver will not pin. *grow_ms adds the time
 * spent growing. */
int pool_take(uint64_t n, uint64_t want, uint64_t *pos, uint64_t *grow_ms, char *err, size_t len);

/* The host address of place pos, and in *n (at most *n) how many bytes
 * from there are contiguous: the shared pool's window is in pieces, a
 * region of this process's own is not. */
char *pool_at(uint64_t pos, uint64_t *n);

/* Adds a region of at least size bytes; *grow_ms adds the time it took.
 * 0, or -1 with err. */
int pool_grow(uint64_t size, uint64_t *grow_ms, char *err, size_t len);

/* Unpins and frees every region. */
void pool_drop(void);

#endif
