/* group: a VRAM budget shared by the processes of one `vram run` (a server
 * and its workers, tensor-parallel ranks), in a file in /dev/shm that every
 * member maps. `vram run` creates it, libvramcap charges it, `vram status`
 * reads it. */
#ifndef VRAM_IPC_GROUP_H
#define VRAM_IPC_GROUP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GROUP_MEMBERS 256
#define GROUP_PREFIX  "vram-group-"

struct group_member {
    int32_t pid; /* 0: free */
    uint32_t pad;
    uint64_t start; /* start ticks: a pid is only the same process with the same start */
    uint64_t used;
    uint64_t peak;
};

struct group_shared {
    uint64_t magic;
    uint32_t version, nmembers;
    pthread_mutex_t lock; /* robust and process-shared */
    uint64_t cap, used, peak;
    uint64_t ctx_bytes; /* a context's footprint on this GPU, once measured */
    int32_t creator;    /* the `vram run` that made the group */
    uint32_t gpu_index;
    char gpu_uuid[96];
    uint64_t created_ms;
    struct group_member members[GROUP_MEMBERS];
};

struct group {
    struct group_shared *sh;
    bool mapped; /* a file (shared), or private memory (VRAM_CAP alone) */
    int slot;    /* this process's member slot, -1 until it first charges */
};

/* Creates the group file at path (mode 0600, fails if it exists). */
int group_create(const char *path, uint64_t cap, unsigned gpu_index, const char *uuid,
                 uint64_t now_ms);

/* Maps an existing group file; -1 if it is not one. */
int group_open(struct group *g, const char *path);

/* A budget for this process alone, when no group file was given. */
int group_open_private(struct group *g, uint64_t cap);

void group_close(struct group *g);

/* Takes bytes from the budget before they are allocated: 0, or -1 when that
 * would pass the cap (after giving back the shares of members that died). */
int group_reserve(struct group *g, uint64_t bytes);

/* Gives bytes back (a free, or an allocation that failed after reserving). */
void group_release(struct group *g, uint64_t bytes);

/* The member slot of this process is its parent's after fork: forget it. */
void group_forget_slot(struct group *g);

/* A consistent copy of the group for readers, with dead members dropped. */
struct group_view {
    uint64_t cap, used, peak, ctx_bytes;
    int32_t creator;
    unsigned gpu_index;
    char gpu_uuid[96];
    unsigned nmembers;
    struct group_member members[GROUP_MEMBERS];
};
int group_read(const char *path, struct group_view *v);

/* Where group files and `vram run`'s lock live: $VRAM_RUN_DIR, else
 * /dev/shm. One machine, one folder (a container sharing the host's GPUs
 * mounts the host's). */
const char *group_dir(void);

/* Calls fn for every group file in group_dir(); stops when fn returns
 * nonzero. */
int group_each(int (*fn)(const char *path, void *arg), void *arg);

#endif
