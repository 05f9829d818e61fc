/* group: a VRAM budget shared by the processes of one `vram run` (a server
 * and its workers, tensor-parallel ranks), in a file in group_dir() that
 * every member maps. `vram run` creates it, libvramcap charges it; anyone
 * may read it (mode 0644), only its owner's processes write it. Readers
 * copy it without its lock (a sequence count tells a torn copy), so no
 * member, however stuck or hostile, can make a reader wait; whose word a
 * file is (its owner) is for ipc/slices.c to weigh. */
#ifndef VRAM_IPC_GROUP_H
#define VRAM_IPC_GROUP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define GROUP_MEMBERS  256
#define GROUP_PREFIX   "vram-group-"
#define GROUP_PATH_MAX 300

/* How long a member waits for its group's lock before it gives up (an
 * allocation is then refused; a free is remembered and given back later):
 * held for microseconds, the lock is only this late when its holder is
 * stopped, or starved on a machine many times overloaded. */
#define GROUP_LOCK_MS 10000

/* While `vram run` checks the room after publishing its slice, the slice is
 * pending; then admitted (see app/runplace.c). */
enum group_state {
    GROUP_PENDING = 1,
    GROUP_ADMITTED = 2,
    GROUP_SUSPENDED = 3, /* its members are suspended (a model of vram serve): it promises nothing */
};

struct group_member {
    int32_t pid;    /* 0: free; in the namespace pidns, where the member lives */
    uint32_t pidns; /* its PID namespace (host/pidns.h); 0: the writer's was unknown */
    uint64_t start; /* start ticks: a pid is only the same process with the same start */
    uint64_t used;
    uint64_t peak;
};

struct group_shared {
    uint64_t magic;
    uint32_t version, nmembers;
    uint32_t seq;         /* odd while a member writes: readers retry */
    uint32_t state;       /* enum group_state */
    pthread_mutex_t lock; /* robust and process-shared: the members' only */
    uint64_t cap, used, peak;
    uint64_t ctx_bytes;   /* a context's footprint on this GPU, once measured */
    uint32_t ctx_known;   /* ctx_bytes is measured (0 bytes: NVML could not say) */
    int32_t ctx_measurer; /* the member making the first context, 0: none */
    uint64_t ctx_measurer_start;
    uint64_t recount_ms; /* when dead members were last looked for */
    int32_t creator;     /* the `vram run` that made the group */
    uint32_t gpu_index;
    uint64_t creator_start;
    char gpu_uuid[96];
    uint64_t created_ms;
    struct group_member members[GROUP_MEMBERS];
};

struct group {
    struct group_shared *sh;
    int fd;           /* the file, kept open: this member's slot is locked through it; -1 */
    bool mapped;      /* a file (shared), or private memory (VRAM_CAP alone) */
    int slot;         /* this process's member slot, -1 until it first charges */
    uint64_t owed;    /* frees that could not take the lock yet */
    unsigned lock_ms; /* GROUP_LOCK_MS (tests shorten it) */
};

/* Where group files live: $VRAM_RUN_DIR, else /dev/shm. One machine, one
 * folder (a container sharing the host's GPUs mounts the host's). */
const char *group_dir(void);

/* Whether group_dir() is safe to keep slices in: a folder owned by root or
 * this user that others cannot write, or can only with the sticky bit (as
 * /dev/shm). 0, or -1 with the reason and the fix in err. */
int group_dir_check(char *err, size_t len);

/* Publishes a new group file in group_dir() (pending, mode 0644, owned by
 * this user, under a random name), whole or not at all: readers never see
 * it half made. Its path goes to path. 0, or -1 with errno. */
int group_create(char *path, size_t len, uint64_t cap, unsigned gpu_index, const char *uuid,
                 uint64_t now_ms);

/* Maps an existing group file as a member: -1 unless it is a regular group
 * file owned by this user or root and writable by no one else. */
int group_open(struct group *g, const char *path);

/* The same for a file of user owner's only: root's daemon keeps the files
 * it gave its models' user (daemon/mgroup.h). */
int group_open_owned(struct group *g, const char *path, uid_t owner);

/* A budget for this process alone, when no group file was given. */
int group_open_private(struct group *g, uint64_t cap);

void group_close(struct group *g);

/* `vram run`: the slice is admitted (or back to pending). */
void group_set_state(struct group *g, enum group_state st);

/* The process whose life is the slice's (slices.c voids the promise and
 * removes the file once it is gone): group_create records the caller;
 * `vram serve` hands its models' files to each model's main process. */
void group_set_creator(struct group *g, int32_t pid, uint64_t start);

/* The GPU the slice is on, for a process the driver moved to another. */
void group_set_gpu(struct group *g, unsigned gpu_index, const char *uuid);

/* Takes bytes from the budget before they are allocated: 0, or -1 when that
 * would pass the cap (after giving back the shares of members that died),
 * or when the lock stayed taken past GROUP_LOCK_MS. */
int group_reserve(struct group *g, uint64_t bytes);

/* Gives bytes back (a free, or an allocation that failed after reserving). */
void group_release(struct group *g, uint64_t bytes);

/* What the process (pid, start) holds on the group's GPU, as measured by
 * someone else (NVML): `vram serve` notes it for a model whose processes
 * do not charge the group themselves (no cap), so that the group promises
 * only what the model has not taken yet. */
void group_note_use(struct group *g, int32_t pid, uint64_t start, uint64_t used);

/* The member slot of this process is its parent's after fork: forget it
 * (and its lock, which the child's copy of the file would keep held). */
void group_forget_slot(struct group *g);

/* Before this process makes its first context: GROUP_CTX_RESERVED when the
 * footprint is known and now reserved (*bytes), GROUP_CTX_MEASURE when no
 * one has measured it yet and this process is to (make the context, then
 * group_ctx_measured), -1 when the group has no room for it. A process
 * that finds another measuring waits for it (a few seconds at most). */
enum { GROUP_CTX_RESERVED = 0, GROUP_CTX_MEASURE = 1 };
int group_ctx_reserve(struct group *g, uint64_t *bytes);

/* The measurer's answer (0: NVML could not say); it then reserves the
 * bytes itself. Told again (a quick figure first, a better one later), the
 * larger stands. A measurer that failed to make its context says so with
 * group_ctx_abandon, and the next one measures. */
void group_ctx_measured(struct group *g, uint64_t bytes);
void group_ctx_abandon(struct group *g);

/* A consistent copy of a group file for any reader, taken without its lock,
 * with dead members dropped, and members that are not processes of the
 * file's owner dropped too (a file speaks only for its owner). */
struct group_view {
    uint32_t owner; /* the file's owner, from the file system */
    uint32_t state;
    uint64_t cap, used, peak, ctx_bytes;
    int32_t creator;
    uint64_t creator_start;
    bool creator_alive; /* the `vram run` that made it lives, as the owner's process */
    unsigned gpu_index;
    char gpu_uuid[96];
    uint64_t created_ms;
    unsigned nmembers;
    struct group_member members[GROUP_MEMBERS]; /* their pids as this reader knows them */
    unsigned unseen; /* live members in namespaces this reader cannot look into (counted in used) */
};

/* Reads the group file at path: -1 when it is not one (not a regular file,
 * writable by others, the wrong size or format). Never blocks: FIFOs,
 * devices and links are refused before any read. */
int group_read(const char *path, struct group_view *v);

/* The same for the entry name of an open folder. */
int group_read_at(int dirfd, const char *name, struct group_view *v);

#endif
