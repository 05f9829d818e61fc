/* state: the simulated driver's memory ledger, shared between processes.
 *
 * A fixed table of slots (pid, gpu) -> bytes in a mapped file. A slot whose
 * process has died (or whose pid now belongs to another process, checked by
 * start time) counts for nothing and is recycled: the real driver frees a
 * process's memory when it exits, even after SIGKILL. */
#include "sim/state.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "host/pidns.h"
#include "host/proc.h"

#define LEDGER_MAGIC 0x7672616d73696d34ULL /* "vramsim4" */

uint64_t sim_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int sim_state_proc_name(uint32_t pid, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/comm", pid);
    FILE *f = fopen(path, "r");
    if (!f || len == 0) {
        if (f)
            fclose(f);
        return -1;
    }
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

uint64_t sim_state_start_of(int32_t pid)
{
    return pid > 0 ? hostproc_start_ticks((uint32_t)pid) : 0;
}

uint32_t sim_state_listed(int32_t pid)
{
    const char *ns = getenv("VRAM_SIM_PIDNS");
    return ns && !strcmp(ns, "1") && pid > 0 ? SIM_PIDNS_SHIFT + (uint32_t)pid : 0;
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

int sim_state_open(struct sim_state *s, const char *machine_path)
{
    char path[PATH_MAX + 64], real[PATH_MAX];
    const char *forced = getenv("VRAM_SIM_STATE");
    if (forced && *forced) {
        snprintf(path, sizeof path, "%s", forced);
    } else {
        if (!realpath(machine_path, real))
            snprintf(real, sizeof real, "%s", machine_path);
        snprintf(path, sizeof path, "/dev/shm/vram-sim-%016llx", (unsigned long long)fnv1a(real));
    }
    s->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (s->fd < 0)
        return -1;
    flock(s->fd, LOCK_EX);
    struct stat st;
    if (fstat(s->fd, &st) < 0 || (st.st_size < (off_t)sizeof(struct sim_ledger) &&
                                  ftruncate(s->fd, sizeof(struct sim_ledger)) < 0)) {
        flock(s->fd, LOCK_UN);
        close(s->fd);
        return -1;
    }
    s->ledger = mmap(NULL, sizeof(struct sim_ledger), PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
    if (s->ledger == MAP_FAILED) {
        flock(s->fd, LOCK_UN);
        close(s->fd);
        return -1;
    }
    if (s->ledger->magic != LEDGER_MAGIC || s->ledger->nslots != SIM_SLOTS) {
        /* every user's processes join the same simulated machine */
        fchmod(s->fd, 0666);
        memset(s->ledger, 0, sizeof *s->ledger);
        s->ledger->magic = LEDGER_MAGIC;
        s->ledger->version = 4;
        s->ledger->nslots = SIM_SLOTS;
        s->ledger->created_ms = sim_now_ms();
    }
    flock(s->fd, LOCK_UN);
    return 0;
}

void sim_state_close(struct sim_state *s)
{
    if (s->ledger && s->ledger != MAP_FAILED)
        munmap(s->ledger, sizeof *s->ledger);
    if (s->fd >= 0)
        close(s->fd);
    s->ledger = NULL;
    s->fd = -1;
}

/* flock excludes other processes only: the threads of one share its
 * descriptor, so a mutex stands between them (NVML is thread-safe, and so
 * is the simulated one). A fork takes it, so that the child's is free. */
static pthread_mutex_t threads_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
    pthread_mutex_lock(&threads_mu);
}

static void fork_done(void)
{
    pthread_mutex_unlock(&threads_mu);
}

static void register_atfork(void)
{
    pthread_atfork(fork_prepare, fork_done, fork_done);
}

void sim_state_lock(struct sim_state *s)
{
    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&threads_mu);
    while (flock(s->fd, LOCK_EX) < 0 && errno == EINTR)
        ;
}

void sim_state_unlock(struct sim_state *s)
{
    flock(s->fd, LOCK_UN);
    pthread_mutex_unlock(&threads_mu);
}

/* A slot's byte in the ledger, locked by its process through its own
 * descriptor: the kernel lets the lock go when the process exits, which a
 * process of another PID namespace (its pid meaningless here) tells by. */
static struct flock slot_lock(const struct sim_state *s, const struct sim_slot *sl, short type)
{
    off_t at = (off_t)((const char *)sl - (const char *)s->ledger);
    return (struct flock){.l_type = type, .l_whence = SEEK_SET, .l_start = at, .l_len = 1};
}

static int alive(const struct sim_state *s, const struct sim_slot *sl)
{
    if (sl->pid <= 0)
        return 0;
    if (sl->pidns && sl->pidns != pidns_self()) {
        struct flock fl = slot_lock(s, sl, F_WRLCK);
        return fcntl(s->fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
    }
    return sim_state_start_of(sl->pid) == sl->start;
}

uint32_t sim_slot_listed_pid(const struct sim_slot *sl)
{
    if (sl->listed)
        return sl->listed;
    if (sl->pidns && sl->pidns != pidns_self()) {
        uint32_t here = pidns_find(sl->pidns, (uint32_t)sl->pid, sl->start);
        return here ? here : SIM_PIDNS_SHIFT + (uint32_t)sl->pid;
    }
    return (uint32_t)sl->pid;
}

/* This process's start time, read once per pid (a fork is a new pid): a
 * slot is this process's own when both match, without asking /proc. */
static uint64_t self_start(int32_t pid)
{
    static int32_t known_pid;
    static uint64_t known_start;
    if (__atomic_load_n(&known_pid, __ATOMIC_ACQUIRE) != pid) {
        known_start = sim_state_start_of(pid);
        __atomic_store_n(&known_pid, pid, __ATOMIC_RELEASE);
    }
    return known_start;
}

static int is_self(const struct sim_slot *sl, int32_t pid)
{
    return sl->pid == pid && sl->start == self_start(pid) && sl->pidns == pidns_self();
}

uint64_t sim_state_used(struct sim_state *s, unsigned gpu)
{
    uint64_t sum = 0;
    for (unsigned i = 0; i < SIM_SLOTS; i++) {
        struct sim_slot *sl = &s->ledger->slots[i];
        if (sl->pid == 0)
            continue;
        if (!alive(s, sl)) {
            memset(sl, 0, sizeof *sl);
            continue;
        }
        if (sl->gpu == gpu)
            sum += sl->used;
    }
    return sum;
}

uint64_t sim_state_used_bound(struct sim_state *s, unsigned gpu)
{
    uint64_t sum = 0;
    for (unsigned i = 0; i < SIM_SLOTS; i++) {
        const struct sim_slot *sl = &s->ledger->slots[i];
        if (sl->pid != 0 && sl->gpu == gpu)
            sum += sl->used;
    }
    return sum;
}

int sim_state_charge(struct sim_state *s, unsigned gpu, unsigned type, int64_t delta)
{
    int32_t pid = (int32_t)getpid();
    uint64_t start = self_start(pid);
    struct sim_slot *free_slot = NULL;
    for (unsigned i = 0; i < SIM_SLOTS; i++) {
        struct sim_slot *sl = &s->ledger->slots[i];
        if (sl->pid == pid && sl->start == start && sl->pidns == pidns_self() &&
            sl->vgpu == gpu) {
            sl->type |= type;
            sl->used = delta < 0 && (uint64_t)-delta > sl->used ? 0 : sl->used + (uint64_t)delta;
            return 0;
        }
        if (!free_slot && sl->pid == 0)
            free_slot = sl;
    }
    /* no free slot: the first one whose process died */
    for (unsigned i = 0; !free_slot && i < SIM_SLOTS; i++)
        if (!alive(s, &s->ledger->slots[i]))
            free_slot = &s->ledger->slots[i];
    if (!free_slot)
        return -1;
    struct flock fl = slot_lock(s, free_slot, F_WRLCK);
    fcntl(s->fd, F_OFD_SETLK, &fl);
    *free_slot = (struct sim_slot){.pid = pid,
                                   .gpu = gpu,
                                   .start = start,
                                   .used = delta > 0 ? (uint64_t)delta : 0,
                                   .type = type,
                                   .vgpu = gpu,
                                   .listed = sim_state_listed(pid),
                                   .pidns = pidns_self()};
    return 0;
}

void sim_state_busy(struct sim_state *s, unsigned gpu)
{
    int32_t pid = (int32_t)getpid();
    for (unsigned i = 0; i < SIM_SLOTS; i++) {
        struct sim_slot *sl = &s->ledger->slots[i];
        if (is_self(sl, pid) && sl->vgpu == gpu)
            sl->busy_ms = sim_now_ms();
    }
}

unsigned sim_state_actual(struct sim_state *s, unsigned vgpu)
{
    int32_t pid = (int32_t)getpid();
    for (unsigned i = 0; i < SIM_SLOTS; i++) {
        const struct sim_slot *sl = &s->ledger->slots[i];
        if (is_self(sl, pid) && sl->vgpu == vgpu)
            return sl->gpu;
    }
    return vgpu;
}

uint32_t sim_state_ckpt_self(struct sim_state *s)
{
    int32_t pid = (int32_t)getpid();
    uint32_t st = 0;
    for (unsigned i = 0; i < SIM_SLOTS; i++) {
        const struct sim_slot *sl = &s->ledger->slots[i];
        if (is_self(sl, pid) && sl->ckpt > st)
            st = sl->ckpt;
    }
    return st;
}
