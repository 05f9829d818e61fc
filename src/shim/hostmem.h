/* hostmem: the host pool, the pinned host memory a swapped-out process's
 * bytes go to.
 * Copies run at PCIe line rate only into pinned memory, and pinning 16 GiB
 * at swap time costs seconds (1.7-1.8 s of a first suspend of 16.7 GiB on
 * an H100, against 0.32 s for the next ones), so alone (`vram run --swap`)
 * the host pool is readied ahead by the control thread, a step at a time while
 * the process makes no driver call (policy "ready", the default: pinning
 * holds up the process's own work, as under the daemon), and kept between
 * swaps; or grown at the first suspend and kept ("keep"), given back at
 * each resume ("none"), or grown all at once ahead of the first swap
 * ("eager"). Regions are populated by several threads with huge pages,
 * then registered with the driver.
 *
 * Under `vram serve` (VRAM_SWAP_DAEMON=1) the memory is the daemon's:
 * chunks of it (memfds made for this model alone, populated by the daemon)
 * arrive with a `prepare` request, which pins them ahead of the next
 * suspend, or with the suspend itself, which pins each as its copies reach
 * it. After the resume they are given back. So a model reaches no host
 * memory but its own, and the daemon decides how much RAM swapping holds. */
#ifndef VRAM_SHIM_HOSTMEM_H
#define VRAM_SHIM_HOSTMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shim/driver.h"

enum hostmem_policy { HOSTMEM_KEEP, HOSTMEM_NONE, HOSTMEM_EAGER, HOSTMEM_READY };

/* Reads VRAM_SWAP_POOL, VRAM_SWAP_DAEMON and VRAM_SWAP_HOST_MAX (a size: the
 * most pinned memory this process may hold of its own). 0, or -1 with err
 * for a bad value. */
int hostmem_setup(char *err, size_t len);
enum hostmem_policy hostmem_policy(void);

/* The daemon brings the host memory (VRAM_SWAP_DAEMON=1). */
bool hostmem_daemon(void);

/* A chunk of the daemon's host memory (a descriptor passed with a
 * request): mapped and kept, in the order given; the descriptor is closed
 * in every case. 0, or -1 with err when it is not a memfd or cannot be
 * mapped. */
int hostmem_add_chunk(int fd, char *err, size_t len);

/* Pins every chunk of the daemon's not pinned yet (a context must be
 * current). 0, or -1 with err. */
int hostmem_pin_chunks(char *err, size_t len);

/* Bytes of the daemon's chunks held now. */
uint64_t hostmem_held(void);

/* Gives every chunk of the daemon's back: unpinned, unmapped. */
void hostmem_drop_chunks(void);

/* Bytes pinned now by this process for itself. */
uint64_t hostmem_bytes(void);

/* Starts a placement pass: every byte of the host pool is free again. */
void hostmem_begin(void);

/* A place for n bytes of pinned memory from the pass, in *pos (for
 * hostmem_at), the daemon's chunks first, then this process's own regions,
 * grown by what is still missing of want bytes (want >= n: all that is
 * left to place) when nothing is left. 0, or -1 with err when host RAM or
 * the limit says no. *grow_ms adds the time spent growing. */
int hostmem_take(uint64_t n, uint64_t want, uint64_t *pos, uint64_t *grow_ms, char *err,
                 size_t len);

/* The end of the pass: the daemon's chunks it did not reach are given back
 * at once (never pinned). */
void hostmem_end(void);

/* The host address of place pos, pinned (a chunk of the daemon's is pinned
 * the first time a copy reaches it, so its pinning overlaps the copies
 * before it; a context must be current), and in *n (at most *n) how many
 * bytes from there are contiguous. NULL with *rc set when pinning fails. */
char *hostmem_at(uint64_t pos, uint64_t *n, CUresult *rc);

/* Adds a region of this process's own of at least size bytes; *grow_ms
 * adds the time it took. 0, or -1 with err. */
int hostmem_grow(uint64_t size, uint64_t *grow_ms, char *err, size_t len);

/* Unpins and frees every region of this process's own. */
void hostmem_drop(void);

/* The disk tier (shim/spill.h). The daemon's spill file for this suspend,
 * taken (and closed in every case): places past the daemon's chunks go
 * there, up to max bytes. 0, or -1 with err. */
int hostmem_set_file(int fd, uint64_t max, char *err, size_t len);

/* Whether place pos is in the spill file (its offset there is pos), and in
 * *n (at most *n) how many bytes from there are. */
bool hostmem_in_file(uint64_t pos, uint64_t *n);

/* The spill file's descriptor, or -1; the bytes it holds. */
int hostmem_file(void);
uint64_t hostmem_file_bytes(void);

/* Writes what the daemon's last chunks hold into the spill file, whole
 * chunks covering at least bytes (0: all of them), then gives those chunks
 * back: the suspended process's bytes from there on are on disk. 0, or -1
 * with err and nothing changed. */
int hostmem_demote(uint64_t bytes, char *err, size_t len);

/* Closes the spill file (after a resume: its bytes are back on the GPU). */
void hostmem_file_close(void);

#endif
