/* hostpool: the memfd and its windows. The map is a short sorted array of
 * pieces (a window is one piece, or a few when the pool is fragmented),
 * taken and given at the rate of suspends. */
#include "daemon/hostpool.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "app/log.h"
#include "core/units.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define FILLERS 8
#define CHUNK   (1ULL << 30)

static uint64_t align_up(uint64_t n)
{
    return (n + HOSTPOOL_ALIGN - 1) / HOSTPOOL_ALIGN * HOSTPOOL_ALIGN;
}

/* Puts a piece where its offset says. */
static void insert(struct hostpool_map *m, struct hostpool_window p)
{
    unsigned k = 0;
    while (k < m->n && m->w[k].off < p.off)
        k++;
    memmove(&m->w[k + 1], &m->w[k], (m->n - k) * sizeof m->w[0]);
    m->w[k] = p;
    m->n++;
}

int hostpool_take(struct hostpool_map *m, unsigned owner, uint64_t n, struct swapline_window *w)
{
    hostpool_give(m, owner);
    w->n = 0;
    if (!n || n > m->size)
        return -1;
    n = align_up(n);
    /* the holes between the pieces, and the smallest that holds n whole */
    struct swapline_extent hole[HOSTPOOL_MAX_WINDOWS + 1];
    unsigned nh = 0, best = HOSTPOOL_MAX_WINDOWS + 1;
    uint64_t at = 0;
    for (unsigned k = 0; k <= m->n; k++) {
        uint64_t end = k < m->n ? m->w[k].off : m->size;
        if (end > at) {
            hole[nh] = (struct swapline_extent){at, end - at};
            if (hole[nh].len >= n && (best > HOSTPOOL_MAX_WINDOWS || hole[nh].len < hole[best].len))
                best = nh;
            nh++;
        }
        if (k < m->n)
            at = m->w[k].off + m->w[k].len;
    }
    if (best <= HOSTPOOL_MAX_WINDOWS) {
        w->e[w->n++] = (struct swapline_extent){hole[best].off, n};
    } else { /* in pieces, the largest holes first: the fewest pieces */
        uint64_t left = n;
        while (left && w->n < SWAPLINE_MAX_EXTENTS) {
            unsigned big = 0;
            for (unsigned h = 1; h < nh; h++)
                if (hole[h].len > hole[big].len)
                    big = h;
            if (!nh || !hole[big].len)
                break;
            uint64_t take = hole[big].len < left ? hole[big].len : left;
            w->e[w->n++] = (struct swapline_extent){hole[big].off, take};
            hole[big].len = 0;
            left -= take;
        }
        if (left) {
            w->n = 0;
            return -1;
        }
    }
    if (m->n + w->n > HOSTPOOL_MAX_WINDOWS) {
        w->n = 0;
        return -1;
    }
    for (unsigned i = 0; i < w->n; i++)
        insert(m, (struct hostpool_window){w->e[i].off, w->e[i].len, owner, i});
    return 0;
}

void hostpool_give(struct hostpool_map *m, unsigned owner)
{
    unsigned k = 0;
    for (unsigned i = 0; i < m->n; i++)
        if (m->w[i].owner != owner)
            m->w[k++] = m->w[i];
    m->n = k;
}

void hostpool_shrink(struct hostpool_map *m, unsigned owner, uint64_t n)
{
    n = align_up(n);
    /* the pieces in the order they are filled: the first n bytes stay */
    for (unsigned seq = 0;; seq++) {
        unsigned k = 0;
        while (k < m->n && !(m->w[k].owner == owner && m->w[k].seq == seq))
            k++;
        if (k == m->n)
            return;
        if (n >= m->w[k].len) {
            n -= m->w[k].len;
        } else if (n) {
            m->w[k].len = n;
            n = 0;
        } else {
            memmove(&m->w[k], &m->w[k + 1], (m->n - k - 1) * sizeof m->w[0]);
            m->n--;
        }
    }
}

uint64_t hostpool_used(const struct hostpool_map *m)
{
    uint64_t b = 0;
    for (unsigned k = 0; k < m->n; k++)
        b += m->w[k].len;
    return b;
}

/* ---- populating ---- */

struct filler {
    char *base;
    uint64_t size;
    uint64_t next; /* the next chunk to fill, shared */
    uint64_t done;
    pthread_mutex_t mu;
};

static void *fill(void *arg)
{
    struct filler *f = arg;
    for (;;) {
        pthread_mutex_lock(&f->mu);
        uint64_t at = f->next;
        f->next += CHUNK;
        pthread_mutex_unlock(&f->mu);
        if (at >= f->size)
            return NULL;
        uint64_t n = f->size - at < CHUNK ? f->size - at : CHUNK;
        if (madvise(f->base + at, n, MADV_POPULATE_WRITE) != 0) /* before Linux 5.14 */
            for (uint64_t o = 0; o < n; o += 4096)
                f->base[at + o] = 0;
        pthread_mutex_lock(&f->mu);
        f->done += n;
        pthread_mutex_unlock(&f->mu);
    }
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Fills the pool with several threads, reporting every few seconds; then
 * lets go of the mapping: the pages stay in the memfd for the models. */
static void *populate(void *arg)
{
    struct filler *f = arg;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned k = cpus > FILLERS ? FILLERS : cpus > 1 ? (unsigned)cpus : 1;
    pthread_t t[FILLERS];
    unsigned started = 0;
    for (unsigned i = 1; i < k; i++)
        if (pthread_create(&t[started], NULL, fill, f) == 0)
            started++;
    fill(f);
    for (unsigned i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    char b[32];
    log_msg(LOG_LV_INFO, "host pool: %s ready for fast swap (%.1f s)",
            units_fmt_size(f->size, b, sizeof b), seconds_since(&t0));
    munmap(f->base, f->size);
    pthread_mutex_destroy(&f->mu);
    free(f);
    return NULL;
}

int hostpool_open(struct hostpool *p, uint64_t size, char *err, size_t len)
{
    memset(p, 0, sizeof *p);
    p->fd = -1;
    size = (size + HOSTPOOL_ALIGN - 1) / HOSTPOOL_ALIGN * HOSTPOOL_ALIGN;
    int fd = memfd_create(SWAPLINE_POOL_NAME, MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
        snprintf(err, len, "cannot make the host pool (memfd of %llu bytes): %s",
                 (unsigned long long)size, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    struct filler *f = calloc(1, sizeof *f);
    void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (!f || base == MAP_FAILED) {
        snprintf(err, len, "cannot map the host pool: %s", strerror(errno));
        free(f);
        close(fd);
        return -1;
    }
    madvise(base, size, MADV_HUGEPAGE); /* where shmem may use huge pages */
    f->base = base;
    f->size = size;
    pthread_mutex_init(&f->mu, NULL);
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &a, populate, f) != 0)
        populate(f); /* no thread: now, then */
    pthread_attr_destroy(&a);
    p->fd = fd;
    p->map.size = size;
    return 0;
}
