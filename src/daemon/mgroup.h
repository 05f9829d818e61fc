/* mgroup: the group files of a model, one per GPU of it. A capped model's
 * are charged by every process its command starts (VRAM_CAP_GROUP), so
 * that a model's workers together hold its share on each GPU, not a share
 * each; an uncapped model's are its reservation, which the daemon keeps
 * told of what the model holds (mgroup_note): either way `vram run`'s
 * admission sees every model's share as promised. Each file
 * lives as long as the model's main process, which it names as its
 * creator: a daemon that restarts and adopts the model finds its files as
 * they were, and files whose model died are removed (by the daemon when it
 * sees the exit, else by ipc/slices.c's cleaning of dead creators). */
#ifndef VRAM_DAEMON_MGROUP_H
#define VRAM_DAEMON_MGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/sched.h"
#include "ipc/group.h"

#define MGROUP_MAX SCHED_MAX_GPUS

struct mgroup {
    unsigned n;
    uid_t uid; /* whose the files are: the model's user's */
    char path[MGROUP_MAX][GROUP_PATH_MAX];
    char list[MGROUP_MAX * GROUP_PATH_MAX]; /* VRAM_CAP_GROUP: the paths, comma-separated */
};

/* Makes a file per GPU (index gpu[k], UUID uuid[k], in CUDA_VISIBLE_DEVICES
 * order), each capped at cap and admitted (the scheduler has placed the
 * model), and the model's user's (uid, gid): its processes write it, and
 * it speaks for that user. 0, or -1 with the reason in err and no file
 * left behind. */
int mgroup_create(struct mgroup *g, uint64_t cap, const unsigned *gpu, const char *const *uuid,
                  unsigned n, uid_t uid, gid_t gid, char *err, size_t len);

/* The model's main process, once forked: the files are its from now on. */
void mgroup_own(const struct mgroup *g, pid_t pid, uint64_t start);

/* The model (main process pid, start, its user uid: the files are that
 * user's) comes back on another GPU than it left (the driver's
 * checkpoint, remapped): its file for GPU from_uuid is for GPU to_index,
 * to_uuid from now on. */
void mgroup_move(pid_t pid, uint64_t start, uid_t uid, const char *from_uuid, unsigned to_index,
                 const char *to_uuid);

/* The model (main process pid, start, user uid) is suspended or about to
 * come back: while suspended its files promise nothing, so that what it gave
 * back is free for `vram run` and everyone else. */
void mgroup_suspended(pid_t pid, uint64_t start, uid_t uid, bool suspended);

/* What a model without a cap (main process pid, start) holds on the GPU
 * with this UUID, noted in its file for that GPU: its processes do not
 * charge the file themselves, so the file, a reservation of the model's
 * share, promises only what the model has not taken yet. */
struct mgroup_use {
    pid_t pid;
    uint64_t start;
    uid_t uid;
    const char *uuid;
    uint64_t used;
};
void mgroup_note(const struct mgroup_use *u, size_t n);

/* Removes the files made by mgroup_create (a start that failed). */
void mgroup_discard(struct mgroup *g);

/* Removes the files of user uid whose creator is the process (pid,
 * start), live or not: the model's processes are gone, or going. */
void mgroup_remove(pid_t pid, uint64_t start, uid_t uid);

/* Removes the files of this user, and of uid[n] (the users the models run
 * as), whose creator died and that no live process uses: what a daemon
 * that died with its models left behind. */
void mgroup_sweep(const uid_t *uid, size_t n);

#endif
