/* swap: moving a whole process's GPU memory to pinned host memory and
 * back, at the same addresses, while its threads wait at the gate. */
#ifndef VRAM_SHIM_SWAP_H
#define VRAM_SHIM_SWAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/cuda_api.h"

struct swap_stats {
    uint64_t bytes;       /* moved */
    unsigned allocations; /* moved */
    uint64_t gate_ms, sync_ms, hostpool_ms;
    uint64_t copy_ms; /* copies, with the releases (out) or the re-creation (in) overlapped */
    uint64_t disk;    /* of bytes, in the spill file (the disk tier) */
    uint64_t disk_ms; /* out: the spill file's part, after the host memory's */
};

/* What the process holds and whether it can be swapped fast: 0, or -1 with
 * the reason it cannot in why. */
int swap_check(uint64_t *bytes, unsigned *allocations, char *why, size_t len);

bool swap_suspended(void);

/* Holds the threads (waiting up to timeout_ms for calls in flight), waits
 * for the GPU, copies everything out and frees the VRAM; into the daemon's
 * chunks first (under the daemon, which must have given some), then this
 * process's own host pool. 0, or -1 with err and the process running as
 * before. */
int swap_suspend(unsigned timeout_ms, struct swap_stats *st, char *err, size_t len);

/* Gets VRAM again, maps it at the same addresses, copies back, releases
 * the threads. floor > 0: an overlapped resume, while another process is
 * moving off the GPU: each allocation waits for its room (up to two
 * minutes) instead of failing, and never takes the GPU's last floor bytes.
 * 0, or -1 with err and the process still suspended. */
int swap_resume(uint64_t floor, struct swap_stats *st, char *err, size_t len);

/* Grows the host pool to what a suspend would need now ("eager"); under
 * the daemon, pins the chunks it gave ahead of the next suspend. */
int swap_prepare(uint64_t *hostpool_ms, char *err, size_t len);

/* Alone (not under the daemon): grows the host pool by about step bytes
 * toward what a suspend would need now (policy "ready": the control
 * thread calls it while the process is idle). 1: grown, more to do; 0:
 * nothing to do; -1 with err. *hostpool_ms: how long it took. */
int swap_ready_step(uint64_t step, uint64_t *hostpool_ms, char *err, size_t len);

/* After a resume has been answered: host memory held for the swap goes
 * back (the daemon's chunks unless keep_chunks, and, under the daemon or
 * with policy none, this process's own), off the resume's path. */
void swap_after_resume(bool keep_chunks);

/* The daemon's chunks given back, unless they hold a suspended process's
 * bytes. */
void swap_drop(void);

/* Suspended: what the daemon's last chunks hold (at least bytes; 0: all)
 * goes to the spill file, and those chunks back (the daemon makes room in
 * host memory for the next suspend). *ms: how long it took. 0, or -1 with
 * err and nothing changed. */
int swap_spill(uint64_t bytes, uint64_t *ms, char *err, size_t len);

#endif
