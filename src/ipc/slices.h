/* slices: every user's `vram run` slices as any user sees them: the group
 * files in group_dir(), each read without a lock and taken only as its
 * owner's word. What `vram status` shows beside each capped process, what
 * admission counts as promised, what the daemon samples. */
#ifndef VRAM_IPC_SLICES_H
#define VRAM_IPC_SLICES_H

#include <stdbool.h>
#include <stdint.h>

#include "ipc/group.h"

/* Files read per user and call, at most: beyond it a user's files are
 * skipped, so that one user's thousands of files slow no one else down
 * more than this many reads. */
#define SLICES_PER_USER 256

struct slice {
    char name[GROUP_PATH_MAX]; /* the file's name in group_dir() */
    struct group_view v;
};

/* Calls fn for every group file in group_dir() that is one (a regular
 * file of the right size and format, written by no one but its owner),
 * whoever owns it; stops when fn returns nonzero. With clean, this user's
 * own files whose `vram run` died and that no live process uses are
 * removed on the way. 0, fn's nonzero answer, or -1 when the folder cannot
 * be read. */
int slices_each(bool clean, int (*fn)(const struct slice *s, void *arg), void *arg);

/* Whether a slice is a live promise on the GPU with this index and UUID
 * and total memory: its `vram run` lives, it is not suspended (a suspended
 * model's: its memory is free for others meanwhile), it has a cap, it was made for
 * that GPU, and the cap is one the GPU could hold (a file promising more
 * than the GPU has is not one vram made). */
bool slices_promises(const struct slice *s, unsigned gpu, const char *uuid, uint64_t total);

/* What a live promise has not taken yet: its cap less what its members use. */
uint64_t slices_unused(const struct slice *s);

#endif
