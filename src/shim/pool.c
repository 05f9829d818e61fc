/* pool: regions of anonymous memory, each populated in parallel (page
 * faults are what makes fresh memory slow: 4.5 s of the 5.6-7.8 s measured
 * for 16 GiB of cudaHostAlloc on an H200), then pinned with
 * cuMemHostRegister. A placement pass hands out space front to back. */
#include "shim/pool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/units.h"
#include "shim/hook.h"
#include "shim/shim.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define MAX_REGIONS 64
#define FILLERS     8
#define HEADROOM    (512ULL << 20) /* host RAM left to everything else */

struct region {
    char *p;
    uint64_t size, used;
};

static struct region regions[MAX_REGIONS];
static unsigned nregions;
static enum pool_policy policy;
static uint64_t host_max = UINT64_MAX;

/* the daemon's pool, when there is one */
static struct {
    bool wanted; /* the daemon gave one (VRAM_SWAP_POOL_FD), mapped or not yet */
    char *base;
    uint64_t size;
    bool registered;
    struct swapline_window win; /* this pass's pieces of the pool */
    uint64_t at, end;           /* how far the window is used, of its bytes */
} shared;
static pthread_mutex_t shared_mu = PTHREAD_MUTEX_INITIALIZER;

/* Whether fd is the daemon's pool: a memfd (the daemon's is named
 * SWAPLINE_POOL_NAME; any name will do), of the size it said. An
 * inherited descriptor number may name any file in a process whose parent
 * closed the pool's. */
static bool is_pool(int fd, uint64_t size)
{
    char path[40], target[80];
    struct stat st;
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n < 0 || fstat(fd, &st) != 0)
        return false;
    target[n] = '\0';
    return S_ISREG(st.st_mode) && (uint64_t)st.st_size == size &&
           strncmp(target, "/memfd:", 7) == 0;
}

static int shared_setup(const char *fd_text, char *err, size_t len)
{
    const char *sz = getenv("VRAM_SWAP_POOL_SIZE");
    char *end;
    long fd = strtol(fd_text, &end, 10);
    uint64_t size = 0;
    if (*end || fd < 0 || !sz || units_parse_size(sz, &size) < 0 || !size) {
        snprintf(err, len, "VRAM_SWAP_POOL_FD='%s' needs VRAM_SWAP_POOL_SIZE, a size", fd_text);
        return -1;
    }
    shared.wanted = true;
    shared.size = size;
    if (!is_pool((int)fd, size)) {
        /* a parent closed it (or its number is some other file by now):
         * the daemon's first suspend request brings it (pool_offer) */
        fprintf(stderr,
                "libvramcap: descriptor %ld is not the daemon's host pool here (a parent "
                "closed it); it comes with the daemon's first request\n",
                fd);
        return 0;
    }
    /* the descriptor stays open: a shell that runs the model's command
     * passes it on through exec to the server itself */
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
    if (p == MAP_FAILED) {
        snprintf(err, len, "cannot map the daemon's host pool (%llu bytes)",
                 (unsigned long long)size);
        return -1;
    }
    shared.base = p;
    return 0;
}

void pool_offer(int fd)
{
    pthread_mutex_lock(&shared_mu);
    if (shared.wanted && !shared.base && is_pool(fd, shared.size)) {
        void *p = mmap(NULL, shared.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED)
            shared.base = p;
    }
    pthread_mutex_unlock(&shared_mu);
    close(fd);
}

int pool_setup(char *err, size_t len)
{
    const char *p = getenv("VRAM_SWAP_POOL");
    if (!p || !*p || strcmp(p, "keep") == 0)
        policy = POOL_KEEP;
    else if (strcmp(p, "none") == 0)
        policy = POOL_NONE;
    else if (strcmp(p, "eager") == 0)
        policy = POOL_EAGER;
    else {
        snprintf(err, len, "VRAM_SWAP_POOL='%s' is not keep, none or eager", p);
        return -1;
    }
    const char *fd = getenv("VRAM_SWAP_POOL_FD");
    if (fd && *fd && shared_setup(fd, err, len) < 0)
        return -1;
    const char *m = getenv("VRAM_SWAP_HOST_MAX");
    if (m && *m && units_parse_size(m, &host_max) < 0) {
        snprintf(err, len, "VRAM_SWAP_HOST_MAX='%s' is not a size (try 64G)", m);
        return -1;
    }
    return 0;
}

enum pool_policy pool_policy(void)
{
    return policy;
}

bool pool_shared(void)
{
    return shared.wanted;
}

int pool_register(char *err, size_t len)
{
    int rc = 0;
    pthread_mutex_lock(&shared_mu);
    if (shared.base && !shared.registered) {
        CUresult r = real_cuMemHostRegister_v2
                         ? real_cuMemHostRegister_v2(shared.base, shared.size, 1 /* PORTABLE */)
                         : CUDA_ERROR_NOT_INITIALIZED;
        if (r == CUDA_SUCCESS) {
            shared.registered = true;
        } else {
            snprintf(err, len, "the driver would not pin the daemon's host pool (error %d)", r);
            rc = -1;
        }
    }
    pthread_mutex_unlock(&shared_mu);
    return rc;
}

bool pool_ready(void)
{
    return shared.registered;
}

int pool_window(const struct swapline_window *w, char *err, size_t errlen)
{
    for (unsigned i = 0; i < w->n; i++) {
        uint64_t off = w->e[i].off, len = w->e[i].len;
        if (!shared.base) {
            snprintf(err, errlen,
                     "the daemon's host pool never reached this process (its parent closed "
                     "the descriptor, and the request did not bring it)");
            return -1;
        }
        if (off > shared.size || len > shared.size - off) {
            snprintf(err, errlen,
                     "the host pool window %llu+%llu is outside the daemon's pool of %llu bytes",
                     (unsigned long long)off, (unsigned long long)len,
                     (unsigned long long)shared.size);
            return -1;
        }
    }
    shared.win = *w;
    shared.at = 0;
    shared.end = swapline_window_len(w);
    return 0;
}

char *pool_at(uint64_t pos, uint64_t *n)
{
    if (!shared.base)
        return (char *)(uintptr_t)pos;
    for (unsigned i = 0; i < shared.win.n; i++) {
        const struct swapline_extent *e = &shared.win.e[i];
        if (pos < e->len) {
            if (*n > e->len - pos)
                *n = e->len - pos;
            return shared.base + e->off + pos;
        }
        pos -= e->len;
    }
    *n = 0; /* past the window: place_all never hands such a place out */
    return NULL;
}

uint64_t pool_bytes(void)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < nregions; i++)
        n += regions[i].size;
    return n;
}

void pool_begin(void)
{
    for (unsigned i = 0; i < nregions; i++)
        regions[i].used = 0;
    shared.at = 0;
}

static uint64_t mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "re");
    unsigned long long kb = 0;
    char line[128];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return (uint64_t)kb << 10;
}

struct fill {
    char *p;
    uint64_t n;
};

static void *fill(void *arg)
{
    struct fill *f = arg;
    if (madvise(f->p, f->n, MADV_POPULATE_WRITE) != 0) /* before Linux 5.14 */
        for (uint64_t o = 0; o < f->n; o += 4096)
            f->p[o] = 0;
    return NULL;
}

static uint64_t ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)((t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000);
}

static int grow(uint64_t size, char *err, size_t len)
{
    char a[32], b[32];
    size = shim_pages(size);
    if (nregions == MAX_REGIONS) {
        snprintf(err, len, "the host pool has %u regions already", MAX_REGIONS);
        return -1;
    }
    if (pool_bytes() + size > host_max) {
        units_fmt_size(size, a, sizeof a);
        units_fmt_size(host_max, b, sizeof b);
        snprintf(err, len, "needs %s more of pinned host RAM; VRAM_SWAP_HOST_MAX allows %s", a, b);
        return -1;
    }
    uint64_t avail = mem_available();
    if (avail < size + HEADROOM) {
        units_fmt_size(size, a, sizeof a);
        units_fmt_size(avail, b, sizeof b);
        snprintf(err, len, "needs %s of host RAM to hold the GPU memory, %s available", a, b);
        return -1;
    }
    char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        snprintf(err, len, "cannot map %llu bytes of host memory", (unsigned long long)size);
        return -1;
    }
    madvise(p, size, MADV_HUGEPAGE);
    pthread_t t[FILLERS];
    struct fill f[FILLERS];
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned k = cpus > FILLERS ? FILLERS : cpus > 1 ? (unsigned)cpus : 1;
    uint64_t slice = shim_pages((size + k - 1) / k);
    unsigned started = 0;
    for (unsigned i = 0; i < k && (uint64_t)i * slice < size; i++) {
        uint64_t off = (uint64_t)i * slice;
        f[i] = (struct fill){p + off, size - off < slice ? size - off : slice};
        if (i == 0 || pthread_create(&t[started], NULL, fill, &f[i]) != 0)
            fill(&f[i]);
        else
            started++;
    }
    for (unsigned i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    CUresult rc = real_cuMemHostRegister_v2 ? real_cuMemHostRegister_v2(p, size, 1 /* PORTABLE */)
                                            : CUDA_ERROR_NOT_INITIALIZED;
    if (rc != CUDA_SUCCESS) {
        munmap(p, size);
        snprintf(err, len, "the driver would not pin %llu bytes of host memory (error %d)",
                 (unsigned long long)size, rc);
        return -1;
    }
    regions[nregions++] = (struct region){p, size, 0};
    return 0;
}

int pool_take(uint64_t n, uint64_t want, uint64_t *pos, uint64_t *grow_ms, char *err, size_t len)
{
    if (shared.base) { /* the window the daemon gave: no growing */
        char a[32], b[32];
        if (shared.end - shared.at < want) { /* want: all that is left to place */
            snprintf(err, len, "the daemon's host pool gave %s for this swap, %s short",
                     units_fmt_size(shared.end, a, sizeof a),
                     units_fmt_size(want - (shared.end - shared.at), b, sizeof b));
            return -1;
        }
        *pos = shared.at;
        shared.at += n;
        return 0;
    }
    for (int tries = 0; tries < 2; tries++) {
        for (unsigned i = 0; i < nregions; i++)
            if (regions[i].size - regions[i].used >= n) {
                *pos = (uint64_t)(uintptr_t)(regions[i].p + regions[i].used);
                regions[i].used += n;
                return 0;
            }
        if (tries)
            break;
        if (pool_grow(want > n ? want : n, grow_ms, err, len) < 0)
            return -1;
    }
    snprintf(err, len, "the host pool is inconsistent");
    return -1;
}

int pool_grow(uint64_t size, uint64_t *grow_ms, char *err, size_t len)
{
    if (shared.base) {
        snprintf(err, len, "the host pool is the daemon's: it does not grow here");
        return -1;
    }
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = grow(size, err, len);
    if (grow_ms)
        *grow_ms += ms_since(&t0);
    return rc;
}

void pool_drop(void)
{
    /* the shared pool stays mapped and registered: the next suspend's */
    for (unsigned i = 0; i < nregions; i++) {
        if (real_cuMemHostUnregister)
            real_cuMemHostUnregister(regions[i].p);
        munmap(regions[i].p, regions[i].size);
    }
    nregions = 0;
}
