/* group: a VRAM budget shared by the processes of one `vram run`.
 *
 * The members' own counters are the truth; the group total is their sum,
 * kept up to date under a robust process-shared mutex. Reserving before
 * allocating, under that lock, is what makes overshoot impossible when two
 * members allocate at the same instant. A member that dies (even by
 * SIGKILL, even holding the lock) loses nothing for the others: its share
 * goes back the next time a reservation needs room, and a lock left held by
 * a dead process is recovered by the next locker (EOWNERDEAD), which
 * recomputes the total from the live members. No stale file can block a new
 * process: each `vram run` makes its own group. */
#include "ipc/group.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/proc.h"

#define GROUP_MAGIC 0x7672616d63617031ULL /* "vramcap1" */

static bool member_alive(const struct group_member *m)
{
    return m->pid > 0 && hostproc_start_ticks((uint32_t)m->pid) == m->start;
}

/* Under the lock: drop dead members and make the total their sum. */
static void recount(struct group_shared *sh)
{
    uint64_t sum = 0;
    for (unsigned i = 0; i < GROUP_MEMBERS; i++) {
        struct group_member *m = &sh->members[i];
        if (m->pid == 0)
            continue;
        if (!member_alive(m)) {
            memset(m, 0, sizeof *m);
            continue;
        }
        sum += m->used;
    }
    sh->used = sum;
}

static void lock(struct group_shared *sh)
{
    int rc = pthread_mutex_lock(&sh->lock);
    if (rc == EOWNERDEAD) {
        /* a member died inside; its half-done update is undone by recounting */
        recount(sh);
        pthread_mutex_consistent(&sh->lock);
    }
}

static void unlock(struct group_shared *sh)
{
    pthread_mutex_unlock(&sh->lock);
}

static void init_shared(struct group_shared *sh, uint64_t cap, bool pshared)
{
    memset(sh, 0, sizeof *sh);
    sh->magic = GROUP_MAGIC;
    sh->version = 1;
    sh->nmembers = GROUP_MEMBERS;
    sh->cap = cap;
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    if (pshared) {
        pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
        pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    }
    pthread_mutex_init(&sh->lock, &a);
    pthread_mutexattr_destroy(&a);
}

int group_create(const char *path, uint64_t cap, unsigned gpu_index, const char *uuid,
                 uint64_t now_ms)
{
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    if (ftruncate(fd, sizeof(struct group_shared)) < 0) {
        close(fd);
        unlink(path);
        return -1;
    }
    struct group_shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (sh == MAP_FAILED) {
        unlink(path);
        return -1;
    }
    init_shared(sh, cap, true);
    sh->creator = (int32_t)getpid();
    sh->gpu_index = gpu_index;
    snprintf(sh->gpu_uuid, sizeof sh->gpu_uuid, "%s", uuid ? uuid : "");
    sh->created_ms = now_ms;
    munmap(sh, sizeof *sh);
    return 0;
}

int group_open(struct group *g, const char *path)
{
    memset(g, 0, sizeof *g);
    g->slot = -1;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size != (off_t)sizeof(struct group_shared)) {
        close(fd);
        return -1;
    }
    g->sh = mmap(NULL, sizeof *g->sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (g->sh == MAP_FAILED || g->sh->magic != GROUP_MAGIC) {
        if (g->sh != MAP_FAILED)
            munmap(g->sh, sizeof *g->sh);
        g->sh = NULL;
        return -1;
    }
    g->mapped = true;
    return 0;
}

int group_open_private(struct group *g, uint64_t cap)
{
    memset(g, 0, sizeof *g);
    g->slot = -1;
    g->sh = malloc(sizeof *g->sh);
    if (!g->sh)
        return -1;
    init_shared(g->sh, cap, false);
    return 0;
}

void group_close(struct group *g)
{
    if (!g->sh)
        return;
    if (g->mapped)
        munmap(g->sh, sizeof *g->sh);
    else
        free(g->sh);
    g->sh = NULL;
}

void group_forget_slot(struct group *g)
{
    g->slot = -1;
}

/* Under the lock: this process's slot, taking a free or dead one. */
static int join(struct group *g)
{
    struct group_shared *sh = g->sh;
    int32_t pid = (int32_t)getpid();
    uint64_t start = hostproc_start_ticks((uint32_t)pid);
    int free_slot = -1;
    for (unsigned i = 0; i < GROUP_MEMBERS; i++) {
        struct group_member *m = &sh->members[i];
        if (m->pid == pid && m->start == start)
            return g->slot = (int)i;
        if (free_slot < 0 && (m->pid == 0 || !member_alive(m)))
            free_slot = (int)i;
    }
    if (free_slot < 0)
        return -1;
    struct group_member *m = &sh->members[free_slot];
    if (m->pid != 0) /* a dead member's share goes back first */
        sh->used -= m->used < sh->used ? m->used : sh->used;
    *m = (struct group_member){pid, 0, start, 0, 0};
    return g->slot = free_slot;
}

int group_reserve(struct group *g, uint64_t bytes)
{
    struct group_shared *sh = g->sh;
    lock(sh);
    int rc = -1;
    if (g->slot < 0 && join(g) < 0)
        goto out;
    if (sh->used + bytes > sh->cap || sh->used + bytes < sh->used)
        recount(sh); /* perhaps a member died and its share is free */
    if (sh->used + bytes > sh->cap || sh->used + bytes < sh->used)
        goto out;
    struct group_member *m = &sh->members[g->slot];
    sh->used += bytes;
    m->used += bytes;
    if (sh->used > sh->peak)
        sh->peak = sh->used;
    if (m->used > m->peak)
        m->peak = m->used;
    rc = 0;
out:
    unlock(sh);
    return rc;
}

void group_release(struct group *g, uint64_t bytes)
{
    struct group_shared *sh = g->sh;
    lock(sh);
    if (g->slot >= 0) {
        struct group_member *m = &sh->members[g->slot];
        uint64_t b = bytes < m->used ? bytes : m->used;
        m->used -= b;
        sh->used -= b < sh->used ? b : sh->used;
    }
    unlock(sh);
}

int group_read(const char *path, struct group_view *v)
{
    struct group g;
    if (group_open(&g, path) < 0)
        return -1;
    struct group_shared *sh = g.sh;
    memset(v, 0, sizeof *v);
    lock(sh);
    v->cap = sh->cap;
    v->peak = sh->peak;
    v->ctx_bytes = sh->ctx_bytes;
    v->creator = sh->creator;
    v->gpu_index = sh->gpu_index;
    memcpy(v->gpu_uuid, sh->gpu_uuid, sizeof v->gpu_uuid);
    v->gpu_uuid[sizeof v->gpu_uuid - 1] = '\0';
    for (unsigned i = 0; i < GROUP_MEMBERS; i++) {
        const struct group_member *m = &sh->members[i];
        if (m->pid == 0 || !member_alive(m))
            continue;
        v->members[v->nmembers++] = *m;
        v->used += m->used;
    }
    unlock(sh);
    group_close(&g);
    return 0;
}

const char *group_dir(void)
{
    const char *d = getenv("VRAM_RUN_DIR");
    return d && *d ? d : "/dev/shm";
}

int group_each(int (*fn)(const char *path, void *arg), void *arg)
{
    DIR *d = opendir(group_dir());
    if (!d)
        return -1;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (strncmp(e->d_name, GROUP_PREFIX, strlen(GROUP_PREFIX)) != 0)
            continue;
        char path[300];
        snprintf(path, sizeof path, "%s/%s", group_dir(), e->d_name);
        rc = fn(path, arg);
    }
    closedir(d);
    return rc;
}
