/* move: one process's move, a suspend (its GPU memory to host RAM) or a
 * resume (back), by the best path it has: libvramcap's fast swap when the
 * process runs under it with VRAM_SWAP=1 and holds only memory the swap
 * can move, else the driver's process checkpoint. `vram suspend`/`resume`
 * and the daemon both go through here, so they choose the same way. */
#ifndef VRAM_MOVE_MOVE_H
#define VRAM_MOVE_MOVE_H

#include <stdbool.h>
#include <stdint.h>

#include "move/ckpt.h"
#include "move/swapctl.h"

enum move_path { MOVE_NONE, MOVE_FAST, MOVE_DRIVER };

struct move_result {
    enum move_path path;
    struct swapline_info fast; /* the fast path's figures */
    char note[240];            /* why the fast path was not taken, if it was not */
    bool not_suspended;        /* move_resume: pid was not suspended: nothing to resume */
};

const char *move_path_name(enum move_path p);

/* Which path pid would take now (MOVE_FAST or MOVE_DRIVER), with the
 * reason in r->note when it is not the fast one. */
enum move_path move_probe(int pid, struct move_result *r);

/* What the fast path may use, from the daemon: chunks of its host memory
 * for this process to suspend into (sent along; none: what the process
 * was given before, or its own pool); on resume while another process is
 * moving off the GPU (overlapped), the free memory to leave: the resume
 * waits for its room instead of failing (0: not overlapped). */
struct move_fast {
    const int *fds; /* the chunks' memfds */
    unsigned nfds;
    uint64_t floor;
    bool keep;      /* resume: keep the chunks pinned for the next suspend */
    bool fast_only; /* a suspend mid-request: fast swap or nothing, never the driver's */
    int spill_fd;       /* suspend: a file for what the chunks cannot hold (the disk tier); -1 */
    uint64_t spill_max; /* ... at most this much */
};

/* r: what move_probe found, or zeroed (MOVE_NONE) to ask here; it comes
 * back with the path taken. ckpt may be NULL (no driver checkpoints): then
 * only the fast path is possible. driver_only skips the fast path. f may
 * be NULL. 0, or -1 with err. */
int move_suspend(struct ckpt *c, const char *ckpt_why, int pid, unsigned timeout_ms,
                 bool driver_only, const struct move_fast *f, struct move_result *r, char *err,
                 size_t len);

/* Gives pid chunks of host memory (n descriptors) to pin ahead of its
 * next suspend; *pin_ms: how long its pinning took. 0, or -1 with err
 * (then the process holds none of them). */
int move_prepare(int pid, const int *fds, unsigned n, uint64_t *pin_ms, char *err, size_t len);

/* Tells pid to give back the chunks it prepared (unless it is suspended
 * in them). 0, or -1 with err. */
int move_drop(int pid, char *err, size_t len);

/* Tells suspended pid to move what its chunks hold (its last chunks, at
 * least bytes of them; 0: all) to its spill file (fd, for up to max bytes,
 * when it holds none yet; else -1) and give them back: *in says what is
 * on disk now and what its chunks still hold. 0, or -1 with err and
 * nothing changed. */
int move_spill(int pid, int fd, uint64_t max, uint64_t bytes, struct swapline_info *in, char *err,
               size_t len);

/* Resumes by the path pid was suspended with (r as for move_suspend). Moving to another GPU
 * (from_uuid, to_uuid) is the driver's alone. 0, or -1 with err and the
 * process as it was: still suspended, or (r->not_suspended) never was. */
int move_resume(struct ckpt *c, const char *ckpt_why, int pid, const char *from_uuid,
                const char *to_uuid, const struct move_fast *f, struct move_result *r, char *err,
                size_t len);

#endif
