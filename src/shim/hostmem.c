/* hostmem: the host pool, pieces of pinned host memory placed end to end: first the
 * daemon's chunks (memfds mapped here, pinned ahead by `prepare` or as the
 * copies reach them), then the daemon's spill file (the disk tier,
 * shim/spill.h: a place there is its offset in the file), then regions of
 * this process's own (anonymous memory populated in parallel, page faults
 * being what makes fresh memory slow: 4.5 s of the 5.6-7.8 s measured for
 * 16 GiB of cudaHostAlloc on an H200, then pinned with
 * cuMemHostRegister). A placement pass hands out places front to back; an
 * allocation may span two pieces. Under the daemon there are no regions of
 * the process's own: host_budget holds what the daemon gives, and what
 * does not fit goes to disk or the suspend is refused. */
#include "shim/hostmem.h"

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
#include "host/meminfo.h"
#include "ipc/swapline.h"
#include "shim/shim.h"
#include "shim/spill.h"
#include "shim/trust.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define MAX_REGIONS 256 /* readied a step at a time: 80 GiB in steps of 1 GiB or more */
#define MAX_CHUNKS  (4 * SWAPLINE_MAX_CHUNKS)
#define FILLERS     8
#define HEADROOM    (512ULL << 20) /* host RAM left to everything else */

struct piece {
    char *p;
    uint64_t size;
    bool pinned;
};

/* The daemon's chunks, in the order given; then this process's regions.
 * Only the control thread touches them (suspend, resume, prepare). */
static struct piece chunks[MAX_CHUNKS];
static unsigned nchunks;
static struct piece regions[MAX_REGIONS];
static unsigned nregions;
static uint64_t cursor; /* the placement pass's next free byte, over all */

/* The spill file: places from file_from (the chunks' end, or 0 once the
 * chunks' bytes went down too) up to file_from + file_max. */
static int file_fd = -1;
static uint64_t file_from, file_max;

static enum hostmem_policy policy;
static bool by_daemon;
static uint64_t host_max = UINT64_MAX;

int hostmem_setup(char *err, size_t len)
{
    const char *p = getenv("VRAM_SWAP_POOL");
    if (!p || !*p || strcmp(p, "ready") == 0)
        policy = HOSTMEM_READY;
    else if (strcmp(p, "keep") == 0)
        policy = HOSTMEM_KEEP;
    else if (strcmp(p, "none") == 0)
        policy = HOSTMEM_NONE;
    else if (strcmp(p, "eager") == 0)
        policy = HOSTMEM_EAGER;
    else {
        snprintf(err, len, "VRAM_SWAP_POOL='%s' is not ready, keep, none or eager", p);
        return -1;
    }
    const char *d = getenv("VRAM_SWAP_DAEMON");
    by_daemon = d && !strcmp(d, "1");
    const char *m = getenv("VRAM_SWAP_HOST_MAX");
    if (m && *m && units_parse_size(m, &host_max) < 0) {
        snprintf(err, len, "VRAM_SWAP_HOST_MAX='%s' is not a size (try 64G)", m);
        return -1;
    }
    return 0;
}

enum hostmem_policy hostmem_policy(void)
{
    return policy;
}

bool hostmem_daemon(void)
{
    return by_daemon;
}

static uint64_t sum(const struct piece *v, unsigned n)
{
    uint64_t b = 0;
    for (unsigned i = 0; i < n; i++)
        b += v[i].size;
    return b;
}

uint64_t hostmem_held(void)
{
    return sum(chunks, nchunks);
}

uint64_t hostmem_bytes(void)
{
    return sum(regions, nregions);
}

int hostmem_add_chunk(int fd, char *err, size_t len)
{
    struct stat st;
    int rc = -1;
    /* the daemon's memfd, so that the bytes are RAM only this model and the
     * daemon hold (shim/trust.h) */
    if (trust_chunk(fd, err, len) < 0) {
    } else if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
        snprintf(err, len, "a chunk of host memory that is not a memfd was passed");
    } else if (nchunks == MAX_CHUNKS) {
        snprintf(err, len, "more than %d chunks of host memory", MAX_CHUNKS);
    } else {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            snprintf(err, len, "cannot map a chunk of %lld bytes of host memory",
                     (long long)st.st_size);
        } else {
            chunks[nchunks++] = (struct piece){p, (uint64_t)st.st_size, false};
            rc = 0;
        }
    }
    close(fd);
    return rc;
}

static CUresult pin(struct piece *c)
{
    if (c->pinned)
        return CUDA_SUCCESS;
    /* the pages into this process's tables in one call, not a fault each
     * (the daemon populated a chunk, but another process's mapping) */
    madvise(c->p, c->size, MADV_POPULATE_WRITE);
    CUresult rc = real_cuMemHostRegister_v2
                      ? real_cuMemHostRegister_v2(c->p, c->size, 1 /* PORTABLE */)
                      : CUDA_ERROR_NOT_INITIALIZED;
    c->pinned = rc == CUDA_SUCCESS;
    return rc;
}

int hostmem_pin_chunks(char *err, size_t len)
{
    for (unsigned i = 0; i < nchunks; i++) {
        CUresult rc = pin(&chunks[i]);
        if (rc != CUDA_SUCCESS) {
            snprintf(err, len, "the driver would not pin the daemon's host memory (error %d)", rc);
            return -1;
        }
    }
    return 0;
}

static void release(struct piece *c)
{
    if (c->pinned && real_cuMemHostUnregister)
        real_cuMemHostUnregister(c->p);
    munmap(c->p, c->size);
    c->pinned = false;
}

void hostmem_drop_chunks(void)
{
    for (unsigned i = 0; i < nchunks; i++)
        release(&chunks[i]);
    nchunks = 0;
}

void hostmem_begin(void)
{
    cursor = 0;
    if (file_fd >= 0)
        file_from = hostmem_held();
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
    if (hostmem_bytes() + size > host_max) {
        units_fmt_size(size, a, sizeof a);
        units_fmt_size(host_max, b, sizeof b);
        snprintf(err, len, "needs %s more of pinned host RAM; VRAM_SWAP_HOST_MAX allows %s", a, b);
        return -1;
    }
    uint64_t avail = meminfo_available();
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
    struct piece r = {p, size, false};
    CUresult rc = pin(&r);
    if (rc != CUDA_SUCCESS) {
        munmap(p, size);
        snprintf(err, len, "the driver would not pin %llu bytes of host memory (error %d)",
                 (unsigned long long)size, rc);
        return -1;
    }
    regions[nregions++] = r;
    return 0;
}

int hostmem_take(uint64_t n, uint64_t want, uint64_t *pos, uint64_t *grow_ms, char *err, size_t len)
{
    uint64_t total = hostmem_held() + (file_fd >= 0 ? file_max : 0) + hostmem_bytes();
    if (want < n)
        want = n;
    if (total - cursor < n && by_daemon) {
        char a[32], b[32], c[32];
        snprintf(err, len,
                 "the daemon's host memory (%s) and spill file (%s) hold less than the %s to "
                 "move: not suspended",
                 units_fmt_size(hostmem_held(), a, sizeof a),
                 units_fmt_size(file_fd >= 0 ? file_max : 0, b, sizeof b),
                 units_fmt_size(cursor + want, c, sizeof c));
        return -1;
    }
    if (total - cursor < n && hostmem_grow(cursor + want - total, grow_ms, err, len) < 0)
        return -1;
    *pos = cursor;
    cursor += n;
    return 0;
}

void hostmem_end(void)
{
    /* chunks past the last place were never pinned: the daemon's again */
    uint64_t at = 0;
    unsigned keep = 0;
    while (keep < nchunks && at < cursor)
        at += chunks[keep++].size;
    for (unsigned i = keep; i < nchunks; i++)
        release(&chunks[i]);
    nchunks = keep;
    file_from = hostmem_held();
    if (file_fd >= 0 && cursor <= file_from) /* all of it fitted in host memory */
        hostmem_file_close();
}

bool hostmem_in_file(uint64_t pos, uint64_t *n)
{
    if (file_fd < 0 || pos < file_from || pos - file_from >= file_max)
        return false;
    if (*n > file_from + file_max - pos)
        *n = file_from + file_max - pos;
    return true;
}

char *hostmem_at(uint64_t pos, uint64_t *n, CUresult *rc)
{
    *rc = CUDA_SUCCESS;
    if (file_fd >= 0 && pos >= file_from) { /* the file's places come before the regions */
        if (pos - file_from < file_max) {
            *n = 0;
            *rc = CUDA_ERROR_INVALID_VALUE;
            return NULL;
        }
        pos -= file_max;
    }
    for (int own = 0; own < 2; own++) {
        struct piece *v = own ? regions : chunks;
        unsigned nv = own ? nregions : nchunks;
        for (unsigned i = 0; i < nv; i++) {
            if (pos >= v[i].size) {
                pos -= v[i].size;
                continue;
            }
            if ((*rc = pin(&v[i])) != CUDA_SUCCESS)
                return NULL;
            if (*n > v[i].size - pos)
                *n = v[i].size - pos;
            return v[i].p + pos;
        }
    }
    *n = 0; /* past the end: place_all never hands such a place out */
    *rc = CUDA_ERROR_INVALID_VALUE;
    return NULL;
}

int hostmem_grow(uint64_t size, uint64_t *grow_ms, char *err, size_t len)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = grow(size, err, len);
    if (grow_ms)
        *grow_ms += ms_since(&t0);
    return rc;
}

void hostmem_drop(void)
{
    for (unsigned i = 0; i < nregions; i++)
        release(&regions[i]);
    nregions = 0;
}

int hostmem_set_file(int fd, uint64_t max, char *err, size_t len)
{
    if (file_fd >= 0) {
        close(fd);
        snprintf(err, len, "a spill file was passed while one is in use");
        return -1;
    }
    if (spill_open(fd, err, len) < 0) {
        close(fd);
        return -1;
    }
    file_fd = fd;
    file_from = hostmem_held();
    file_max = max;
    return 0;
}

int hostmem_file(void)
{
    return file_fd;
}

uint64_t hostmem_file_bytes(void)
{
    if (file_fd < 0 || cursor <= file_from)
        return 0;
    return cursor - file_from < file_max ? cursor - file_from : file_max;
}

void hostmem_file_close(void)
{
    if (file_fd >= 0)
        close(file_fd);
    file_fd = -1;
    file_from = file_max = 0;
}

int hostmem_demote(uint64_t bytes, char *err, size_t len)
{
    if (file_fd < 0) {
        snprintf(err, len, "no spill file to move host memory to");
        return -1;
    }
    /* whole chunks from the end, at least bytes of them (0: all) */
    unsigned keep = nchunks;
    uint64_t going = 0;
    while (keep > 0 && (!bytes || going < bytes))
        going += chunks[--keep].size;
    uint64_t start = sum(chunks, keep), at = start;
    struct spill_host v[MAX_CHUNKS];
    unsigned n = 0;
    for (unsigned i = keep; i < nchunks && at < cursor; i++) {
        uint64_t used = cursor - at < chunks[i].size ? cursor - at : chunks[i].size;
        v[n++] = (struct spill_host){chunks[i].p, at, used};
        at += chunks[i].size;
    }
    if (spill_reserve(file_fd, start, cursor, err, len) < 0 ||
        spill_write_host(file_fd, v, n, err, len) < 0)
        return -1;
    /* the places from start on are now the file's: those chunks go back */
    uint64_t end = file_from + file_max > cursor ? file_from + file_max : cursor;
    for (unsigned i = keep; i < nchunks; i++)
        release(&chunks[i]);
    nchunks = keep;
    file_from = start;
    file_max = end - start;
    return 0;
}
