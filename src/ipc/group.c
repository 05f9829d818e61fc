/* group: a VRAM budget shared by the processes of one `vram run`.
 *
 * The members' own counters are the truth; the group total is their sum,
 * kept up to date under a robust process-shared mutex. Reserving before
 * allocating, under that lock, is what makes overshoot impossible when two
 * members allocate at the same instant. A member that dies (even by
 * SIGKILL, even holding the lock) loses nothing for the others: its share
 * goes back the next time a reservation needs room, and a lock left held by
 * a dead process is recovered by the next locker (EOWNERDEAD), which
 * recomputes the total from the live members.
 *
 * The lock is the members' alone, and even they wait for it GROUP_LOCK_MS
 * at most. Everyone else reads the file with pread, never mmap (its owner
 * could truncate it under a mapping: SIGBUS), and never locks: each write
 * is bracketed by a sequence count, odd while it lasts, and a copy taken
 * between two equal even counts is whole. A copy that never settles (a
 * writer died inside, or a hostile owner keeps the count moving) is used as
 * it is: it can only misstate its owner's own slice.
 *
 * A member is known by its pid in its own PID namespace, its namespace and
 * its start time. A container's members (each pid 1 of a namespace of its
 * own, with its own /proc) mean nothing by their pids outside it: one was
 * taken for a dead member and its share given to the next (issue 42,
 * item 5). So each member holds a lock on its slot's byte of the file
 * (an open file description's lock, fcntl F_OFD_SETLK), which the kernel
 * lets go when it exits; a member of another namespace is alive while its
 * slot is locked, seen from any namespace, and a reader turns it into the
 * pid it knows (host/pidns.c). */
#include "ipc/group.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "host/clock.h"
#include "host/pidns.h"
#include "host/proc.h"

#define GROUP_MAGIC   0x7672616d63617032ULL /* "vramcap2" */
#define GROUP_VERSION 2
/* the full search for dead members (a /proc read per member) runs at most
 * this often when reservations keep failing in a full group */
#define RECOUNT_MS 5

const char *group_dir(void)
{
    const char *d = getenv("VRAM_RUN_DIR");
    return d && *d ? d : "/dev/shm";
}

int group_dir_check(char *err, size_t len)
{
    const char *d = group_dir();
    struct stat st;
    if (stat(d, &st) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, len, "%s: %s; create it, or set VRAM_RUN_DIR to a folder of yours", d,
                 errno ? strerror(errno) : "not a folder");
        return -1;
    }
    if (st.st_uid != 0 && st.st_uid != geteuid()) {
        snprintf(err, len,
                 "%s belongs to user %u, who could remove or replace every slice in it; set "
                 "VRAM_RUN_DIR to a folder of yours, or leave it unset for /dev/shm",
                 d, (unsigned)st.st_uid);
        return -1;
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
        snprintf(err, len,
                 "%s is writable by other users without the sticky bit: anyone could remove or "
                 "replace the slices in it; chmod +t %s",
                 d, d);
        return -1;
    }
    return 0;
}

/* (pid, start) names a live process; a start of 0 names none (a forged
 * entry for a pid that does not exist would match a gone pid's 0) */
static bool same_process(int32_t pid, uint64_t start)
{
    return pid > 0 && start != 0 && hostproc_start_ticks((uint32_t)pid) == start;
}

static off_t slot_at(unsigned i)
{
    return (off_t)(offsetof(struct group_shared, members) + i * sizeof(struct group_member));
}

/* This process's slot i, locked through fd for as long as the process (and
 * no copy of its descriptor elsewhere) lives. */
static void lock_slot(int fd, unsigned i)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = slot_at(i), .l_len = 1};
    if (fd >= 0)
        fcntl(fd, F_OFD_SETLK, &fl);
}

/* Whether another open file description holds slot i's lock: asked, never
 * waited for (F_OFD_GETLK), of a descriptor open for reading alone too. */
static bool slot_locked(int fd, unsigned i)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = slot_at(i), .l_len = 1};
    return fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

/* Whether m, of another namespace than this process's, is one whose pid
 * means nothing here. */
static bool elsewhere(const struct group_member *m)
{
    return m->pidns && m->pidns != pidns_self();
}

/* Member i of sh (read through fd, -1: none) lives: by its pid here, or by
 * its slot's lock from another namespace (without a descriptor, it does). */
static bool member_alive(int fd, const struct group_shared *sh, unsigned i)
{
    const struct group_member *m = &sh->members[i];
    if (elsewhere(m))
        return fd < 0 || slot_locked(fd, i);
    return same_process(m->pid, m->start);
}

/* A writer's bracket: readers that see an odd count, or two different
 * counts around their copy, copy again. */
static void write_begin(struct group_shared *sh)
{
    uint32_t s = __atomic_load_n(&sh->seq, __ATOMIC_RELAXED);
    __atomic_store_n(&sh->seq, s | 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static void write_end(struct group_shared *sh)
{
    uint32_t s = __atomic_load_n(&sh->seq, __ATOMIC_RELAXED);
    __atomic_store_n(&sh->seq, (s | 1) + 1, __ATOMIC_RELEASE);
}

/* Under the lock: drop dead members and make the total their sum. */
static void recount(int fd, struct group_shared *sh)
{
    uint64_t sum = 0;
    for (unsigned i = 0; i < GROUP_MEMBERS; i++) {
        struct group_member *m = &sh->members[i];
        if (m->pid == 0)
            continue;
        if (!member_alive(fd, sh, i)) {
            memset(m, 0, sizeof *m);
            continue;
        }
        sum += m->used;
    }
    sh->used = sum;
    sh->recount_ms = clock_mono_ms();
}

/* Under the lock: the members whose pid is gone, found without /proc
 * (a pid that was reused, or a zombie, waits for the full recount). */
static void drop_gone(struct group_shared *sh)
{
    for (unsigned i = 0; i < GROUP_MEMBERS; i++) {
        struct group_member *m = &sh->members[i];
        if (m->pid > 0 && !elsewhere(m) && kill(m->pid, 0) < 0 && errno == ESRCH) {
            sh->used -= m->used < sh->used ? m->used : sh->used;
            memset(m, 0, sizeof *m);
        }
    }
}

static void give_back(struct group *g, uint64_t bytes)
{
    struct group_shared *sh = g->sh;
    if (g->slot < 0 || bytes == 0)
        return;
    struct group_member *m = &sh->members[g->slot];
    uint64_t b = bytes < m->used ? bytes : m->used;
    m->used -= b;
    sh->used -= b < sh->used ? b : sh->used;
}

static void unlock(struct group_shared *sh)
{
    pthread_mutex_unlock(&sh->lock);
}

/* The lock, g->lock_ms at most; frees owed from earlier timeouts are
 * settled first. 0, or -1 when it stayed taken. */
static int lock(struct group *g)
{
    struct group_shared *sh = g->sh;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += g->lock_ms / 1000;
    until.tv_nsec += (long)(g->lock_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    int rc = pthread_mutex_timedlock(&sh->lock, &until);
    if (rc == EOWNERDEAD) {
        /* a member died inside; its half-done update is undone by recounting */
        write_begin(sh);
        recount(g->fd, sh);
        write_end(sh);
        pthread_mutex_consistent(&sh->lock);
    } else if (rc != 0) {
        return -1;
    }
    uint64_t owed = __atomic_exchange_n(&g->owed, 0, __ATOMIC_ACQ_REL);
    if (owed) {
        write_begin(sh);
        give_back(g, owed);
        write_end(sh);
    }
    return 0;
}

static void init_shared(struct group_shared *sh, uint64_t cap, bool pshared)
{
    memset(sh, 0, sizeof *sh);
    sh->magic = GROUP_MAGIC;
    sh->version = GROUP_VERSION;
    sh->nmembers = GROUP_MEMBERS;
    sh->state = GROUP_ADMITTED;
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

static uint64_t random64(void)
{
    uint64_t r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = ((uint64_t)getpid() << 32) ^ clock_mono_ms() ^ (uint64_t)(uintptr_t)&r;
    return r;
}

int group_create(char *path, size_t len, uint64_t cap, unsigned gpu_index, const char *uuid,
                 uint64_t now_ms)
{
    const char *dir = group_dir();
    char tmp[GROUP_PATH_MAX];
    unsigned uid = (unsigned)geteuid();
    snprintf(tmp, sizeof tmp, "%s/.vram-new-%u-%016llx", dir, uid, (unsigned long long)random64());
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    struct group_shared *sh = MAP_FAILED;
    /* readable by every user whatever the umask: other users' admission
     * counts this slice */
    if (fchmod(fd, 0644) < 0 || ftruncate(fd, sizeof(struct group_shared)) < 0 ||
        (sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
        int e = errno;
        close(fd);
        unlink(tmp);
        errno = e;
        return -1;
    }
    close(fd);
    init_shared(sh, cap, true);
    sh->state = GROUP_PENDING;
    sh->creator = (int32_t)getpid();
    sh->creator_start = hostproc_start_ticks((uint32_t)getpid());
    sh->gpu_index = gpu_index;
    snprintf(sh->gpu_uuid, sizeof sh->gpu_uuid, "%s", uuid ? uuid : "");
    sh->created_ms = now_ms;
    munmap(sh, sizeof *sh);
    /* a link is atomic: the name appears with the whole file behind it. A
     * random name cannot be taken in advance; one that is, is tried again */
    int rc = -1;
    for (int i = 0; i < 16 && rc < 0; i++) {
        snprintf(path, len, "%s/%s%u-%016llx", dir, GROUP_PREFIX, uid,
                 (unsigned long long)random64());
        rc = link(tmp, path);
        if (rc < 0 && errno != EEXIST)
            break;
    }
    int e = errno;
    unlink(tmp);
    errno = e;
    return rc;
}

static bool stat_ok(const struct stat *st)
{
    return S_ISREG(st->st_mode) && st->st_size == (off_t)sizeof(struct group_shared) &&
           !(st->st_mode & (S_IWGRP | S_IWOTH));
}

static int open_as(struct group *g, const char *path, bool any, uid_t owner);

int group_open(struct group *g, const char *path)
{
    return open_as(g, path, true, 0);
}

int group_open_owned(struct group *g, const char *path, uid_t owner)
{
    return open_as(g, path, false, owner);
}

/* any: a file of this user's or root's; else of owner's only */
static int open_as(struct group *g, const char *path, bool any, uid_t owner)
{
    memset(g, 0, sizeof *g);
    g->fd = -1;
    g->slot = -1;
    g->lock_ms = GROUP_LOCK_MS;
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    /* members write it: only a file of this user's, or root's, is one */
    if (fstat(fd, &st) < 0 || !stat_ok(&st) ||
        (any ? st.st_uid != geteuid() && st.st_uid != 0 : st.st_uid != owner)) {
        close(fd);
        return -1;
    }
    g->sh = mmap(NULL, sizeof *g->sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (g->sh == MAP_FAILED || g->sh->magic != GROUP_MAGIC || g->sh->version != GROUP_VERSION) {
        if (g->sh != MAP_FAILED)
            munmap(g->sh, sizeof *g->sh);
        g->sh = NULL;
        close(fd);
        return -1;
    }
    g->fd = fd;
    g->mapped = true;
    return 0;
}

int group_open_private(struct group *g, uint64_t cap)
{
    memset(g, 0, sizeof *g);
    g->fd = -1;
    g->slot = -1;
    g->lock_ms = GROUP_LOCK_MS;
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
    if (g->fd >= 0)
        close(g->fd);
    g->fd = -1;
}

void group_forget_slot(struct group *g)
{
    g->slot = -1;
    g->owed = 0;
    /* the descriptor is the parent's open file description, and with it the
     * parent's lock, which this child would keep held: a new one of its own */
    char path[48];
    if (g->fd < 0 || snprintf(path, sizeof path, "/proc/self/fd/%d", g->fd) <= 0)
        return;
    int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
        dup3(fd, g->fd, O_CLOEXEC);
        close(fd);
    }
}

void group_set_state(struct group *g, enum group_state st)
{
    if (lock(g) < 0) {
        __atomic_store_n(&g->sh->state, (uint32_t)st, __ATOMIC_RELEASE);
        return;
    }
    write_begin(g->sh);
    g->sh->state = (uint32_t)st;
    write_end(g->sh);
    unlock(g->sh);
}

void group_set_creator(struct group *g, int32_t pid, uint64_t start)
{
    bool locked = lock(g) == 0; /* a stuck member cannot keep the file its creator's */
    write_begin(g->sh);
    g->sh->creator = pid;
    g->sh->creator_start = start;
    write_end(g->sh);
    if (locked)
        unlock(g->sh);
}

void group_set_gpu(struct group *g, unsigned gpu_index, const char *uuid)
{
    bool locked = lock(g) == 0;
    write_begin(g->sh);
    g->sh->gpu_index = gpu_index;
    snprintf(g->sh->gpu_uuid, sizeof g->sh->gpu_uuid, "%s", uuid ? uuid : "");
    write_end(g->sh);
    if (locked)
        unlock(g->sh);
}

/* Under the lock: this process's slot, taking a free or dead one. */
static int join(struct group *g)
{
    struct group_shared *sh = g->sh;
    int32_t pid = (int32_t)getpid();
    uint32_t ns = pidns_self();
    uint64_t start = hostproc_start_ticks((uint32_t)pid);
    int free_slot = -1;
    for (unsigned i = 0; i < GROUP_MEMBERS; i++) {
        struct group_member *m = &sh->members[i];
        if (m->pid == pid && m->start == start && m->pidns == ns) {
            lock_slot(g->fd, i); /* again, after an exec closed the descriptor that held it */
            return g->slot = (int)i;
        }
        if (free_slot < 0 && m->pid == 0)
            free_slot = (int)i;
    }
    for (unsigned i = 0; free_slot < 0 && i < GROUP_MEMBERS; i++)
        if (!member_alive(g->fd, sh, i))
            free_slot = (int)i;
    if (free_slot < 0)
        return -1;
    struct group_member *m = &sh->members[free_slot];
    if (m->pid != 0) /* a dead member's share goes back first */
        sh->used -= m->used < sh->used ? m->used : sh->used;
    *m = (struct group_member){pid, ns, start, 0, 0};
    lock_slot(g->fd, (unsigned)free_slot);
    return g->slot = free_slot;
}

static bool over(const struct group_shared *sh, uint64_t bytes)
{
    return sh->used + bytes > sh->cap || sh->used + bytes < sh->used;
}

/* Under the lock and the bracket. */
static int reserve_locked(struct group *g, uint64_t bytes)
{
    struct group_shared *sh = g->sh;
    if (g->slot < 0 && join(g) < 0)
        return -1;
    if (over(sh, bytes)) /* perhaps a member died and its share is free */
        drop_gone(sh);
    if (over(sh, bytes) && clock_mono_ms() - sh->recount_ms >= RECOUNT_MS)
        recount(g->fd, sh);
    if (over(sh, bytes))
        return -1;
    struct group_member *m = &sh->members[g->slot];
    sh->used += bytes;
    m->used += bytes;
    if (sh->used > sh->peak)
        sh->peak = sh->used;
    if (m->used > m->peak)
        m->peak = m->used;
    return 0;
}

int group_reserve(struct group *g, uint64_t bytes)
{
    struct group_shared *sh = g->sh;
    if (lock(g) < 0)
        return -1;
    write_begin(sh);
    int rc = reserve_locked(g, bytes);
    write_end(sh);
    unlock(sh);
    return rc;
}

void group_release(struct group *g, uint64_t bytes)
{
    if (lock(g) < 0) {
        /* given back by the next one to get the lock in this process */
        __atomic_add_fetch(&g->owed, bytes, __ATOMIC_ACQ_REL);
        return;
    }
    write_begin(g->sh);
    give_back(g, bytes);
    write_end(g->sh);
    unlock(g->sh);
}

void group_note_use(struct group *g, int32_t pid, uint64_t start, uint64_t used)
{
    struct group_shared *sh = g->sh;
    if (pid <= 0 || lock(g) < 0)
        return;
    write_begin(sh);
    uint32_t ns = pidns_self();
    struct group_member *m = NULL, *free_slot = NULL;
    for (unsigned i = 0; i < GROUP_MEMBERS && !m; i++) {
        struct group_member *c = &sh->members[i];
        if (c->pid == pid && c->start == start && c->pidns == ns)
            m = c;
        else if (!free_slot && (c->pid == 0 || !member_alive(g->fd, sh, i)))
            free_slot = c;
    }
    if (!m && free_slot) {
        if (free_slot->pid != 0) /* a dead member's share goes back first */
            sh->used -= free_slot->used < sh->used ? free_slot->used : sh->used;
        *free_slot = (struct group_member){pid, ns, start, 0, 0};
        m = free_slot;
    }
    if (m) {
        sh->used = sh->used - (m->used < sh->used ? m->used : sh->used) + used;
        m->used = used;
        if (used > m->peak)
            m->peak = used;
        if (sh->used > sh->peak)
            sh->peak = sh->used;
    }
    write_end(sh);
    unlock(sh);
}

/* The measurer's member slot (it joins before it measures), or -1: a pid
 * alone is no one across namespaces, where every container's first
 * process is pid 1. */
static int measurer_slot(const struct group_shared *sh)
{
    for (unsigned i = 0; sh->ctx_measurer && i < GROUP_MEMBERS; i++)
        if (sh->members[i].pid == sh->ctx_measurer &&
            sh->members[i].start == sh->ctx_measurer_start)
            return (int)i;
    return -1;
}

static bool measurer_alive(const struct group *g)
{
    int i = measurer_slot(g->sh);
    return i >= 0 ? member_alive(g->fd, g->sh, (unsigned)i)
                  : same_process(g->sh->ctx_measurer, g->sh->ctx_measurer_start);
}

/* Whether this process is the group's measurer. */
static bool measuring(const struct group *g)
{
    return g->slot >= 0 && measurer_slot(g->sh) == g->slot;
}

int group_ctx_reserve(struct group *g, uint64_t *bytes)
{
    struct group_shared *sh = g->sh;
    int32_t me = (int32_t)getpid();
    uint64_t deadline = clock_mono_ms() + 5000;
    for (;;) {
        if (lock(g) < 0)
            return -1;
        write_begin(sh);
        int rc;
        if (sh->ctx_known) {
            *bytes = sh->ctx_bytes;
            rc = reserve_locked(g, *bytes) == 0 ? GROUP_CTX_RESERVED : -1;
        } else if (g->slot < 0 && join(g) < 0) {
            rc = -1; /* no slot for another member */
        } else if (measuring(g) || !measurer_alive(g) || clock_mono_ms() >= deadline) {
            /* the first context: made before it can be charged, while no
             * other member makes one */
            sh->ctx_measurer = me;
            sh->ctx_measurer_start = sh->members[g->slot].start;
            *bytes = 0;
            rc = GROUP_CTX_MEASURE;
        } else {
            rc = 2; /* another member is measuring: wait for its figure */
        }
        write_end(sh);
        unlock(sh);
        if (rc != 2)
            return rc;
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

void group_ctx_measured(struct group *g, uint64_t bytes)
{
    struct group_shared *sh = g->sh;
    bool locked = lock(g) == 0;
    write_begin(sh);
    /* a first figure, then a better one: the larger stands */
    if (!sh->ctx_known || bytes > sh->ctx_bytes)
        __atomic_store_n(&sh->ctx_bytes, bytes, __ATOMIC_RELEASE);
    __atomic_store_n(&sh->ctx_known, 1, __ATOMIC_RELEASE);
    sh->ctx_measurer = 0;
    write_end(sh);
    if (locked)
        unlock(sh);
}

void group_ctx_abandon(struct group *g)
{
    struct group_shared *sh = g->sh;
    if (lock(g) < 0)
        return;
    write_begin(sh);
    if (measuring(g))
        sh->ctx_measurer = 0;
    write_end(sh);
    unlock(sh);
}

/* A whole copy of the file without its lock (see the top of this file). */
static int copy(int fd, struct group_shared *out)
{
    const off_t at = (off_t)offsetof(struct group_shared, seq);
    for (int i = 0; i < 64; i++) {
        uint32_t s1, s2;
        if (pread(fd, &s1, sizeof s1, at) != (ssize_t)sizeof s1)
            return -1;
        if (!(s1 & 1)) {
            if (pread(fd, out, sizeof *out, 0) != (ssize_t)sizeof *out ||
                pread(fd, &s2, sizeof s2, at) != (ssize_t)sizeof s2)
                return -1;
            if (s1 == s2 && out->seq == s1)
                return 0;
        }
        sched_yield();
    }
    return pread(fd, out, sizeof *out, 0) == (ssize_t)sizeof *out ? 0 : -1;
}

static bool owned_by(uint32_t pid, uint32_t owner)
{
    uint32_t uid;
    return hostproc_uid(pid, &uid) == 0 && uid == owner;
}

static int read_fd(int fd, struct group_view *v)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || !stat_ok(&st))
        return -1;
    struct group_shared *sh = malloc(sizeof *sh);
    if (!sh)
        return -1;
    if (copy(fd, sh) < 0 || sh->magic != GROUP_MAGIC || sh->version != GROUP_VERSION) {
        free(sh);
        return -1;
    }
    memset(v, 0, sizeof *v);
    v->owner = (uint32_t)st.st_uid;
    v->state = sh->state;
    v->cap = sh->cap;
    v->peak = sh->peak;
    v->ctx_bytes = sh->ctx_bytes;
    v->creator = sh->creator;
    v->creator_start = sh->creator_start;
    v->creator_alive =
        same_process(sh->creator, sh->creator_start) && owned_by((uint32_t)sh->creator, v->owner);
    v->gpu_index = sh->gpu_index;
    memcpy(v->gpu_uuid, sh->gpu_uuid, sizeof v->gpu_uuid);
    v->gpu_uuid[sizeof v->gpu_uuid - 1] = '\0';
    v->created_ms = sh->created_ms;
    for (unsigned i = 0; i < GROUP_MEMBERS; i++) {
        struct group_member m = sh->members[i];
        if (m.pid <= 0 || !member_alive(fd, sh, i))
            continue;
        if (elsewhere(&m)) { /* alive (its slot is locked): by which pid here? */
            uint32_t here = pidns_find(m.pidns, (uint32_t)m.pid, m.start);
            if (!here) { /* in a namespace beside this reader's: counted, not shown */
                v->unseen++;
                v->used = v->used + m.used < v->used ? UINT64_MAX : v->used + m.used;
                continue;
            }
            m.pid = (int32_t)here;
            m.pidns = pidns_self();
        }
        if (!owned_by((uint32_t)m.pid, v->owner))
            continue;
        v->members[v->nmembers++] = m;
        v->used = v->used + m.used < v->used ? UINT64_MAX : v->used + m.used;
    }
    free(sh);
    return 0;
}

int group_read_at(int dirfd, const char *name, struct group_view *v)
{
    struct stat st;
    /* looked at before it is opened: a FIFO would block the open */
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !stat_ok(&st))
        return -1;
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = read_fd(fd, v);
    close(fd);
    return rc;
}

int group_read(const char *path, struct group_view *v)
{
    return group_read_at(AT_FDCWD, path, v);
}
