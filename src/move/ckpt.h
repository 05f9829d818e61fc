/* ckpt: suspending another process's GPU memory to host RAM and back with
 * the NVIDIA driver's process checkpoints (cuCheckpointProcess*, driver 570
 * or newer), loaded at run time. The process stays alive and keeps its
 * pointers; while suspended its CUDA calls wait. */
#ifndef VRAM_MOVE_CKPT_H
#define VRAM_MOVE_CKPT_H

#include <stddef.h>

struct ckpt;

/* Loads libcuda.so.1 and initializes it (restores need cuInit in the
 * caller). VRAM_ENODRIVER without a driver; VRAM_EFAIL with a message
 * naming the driver version needed when the calls are missing. */
int ckpt_open(struct ckpt **out, char *err, size_t len);
void ckpt_close(struct ckpt *c);

enum ckpt_state { CKPT_RUNNING = 0, CKPT_LOCKED, CKPT_CHECKPOINTED, CKPT_FAILED };

/* The state of pid's CUDA side; -1 with err when pid has none. */
int ckpt_state(struct ckpt *c, int pid, char *err, size_t len);

const char *ckpt_state_name(int state);

/* Lock (waiting up to timeout_ms for its work to finish; 0: no limit),
 * then checkpoint. A failed checkpoint unlocks again. 0 or -1 with err. */
int ckpt_suspend(struct ckpt *c, int pid, unsigned timeout_ms, char *err, size_t len);

/* Restore, onto to_uuid instead of from_uuid when both are given ("GPU-...",
 * same kind of GPU), then unlock. A restore that cannot get memory leaves
 * the process suspended. 0 or -1 with err. */
int ckpt_resume(struct ckpt *c, int pid, const char *from_uuid, const char *to_uuid, char *err,
                size_t len);

#endif
