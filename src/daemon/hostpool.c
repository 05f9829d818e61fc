/* hostpool: chunks made, populated and freed by the pool's threads, given
 * and taken back by the loop. One mutex guards the lists; no call under it
 * touches a page. */
#include "daemon/hostpool.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "app/log.h"
#include "core/units.h"
#include "host/meminfo.h"
#include "ipc/swapline.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define MAX_THREADS  4
#define OWNER_CHUNKS (4 * SWAPLINE_MAX_CHUNKS)
#define SPARES       1024

struct chunk {
    int fd;
    uint64_t size;
};

struct owned {
    struct chunk c[OWNER_CHUNKS];
    unsigned n;
    uint64_t charged; /* host memory it holds outside chunks (the driver's checkpoint) */
};

struct hostpool {
    uint64_t limit, chunk;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th[MAX_THREADS];
    unsigned nth;
    bool quit;
    uint64_t target; /* spare bytes wanted */
    struct chunk spare[SPARES];
    unsigned nspare;
    struct chunk freeq[SPARES];
    unsigned nfree;
    uint64_t spare_b, filling, given, freeing;
    uint64_t charged; /* the owners' charges, all told */
    uint64_t made, freed; /* since it opened: what its threads populated, and freed */
    bool short_said; /* RAM ran short: said once until it is not */
    struct owned own[HOSTPOOL_OWNERS];
};

/* RAM the pool leaves to everything else: an eighth of what is available,
 * and 2 GiB more. */
static uint64_t ram_for_pool(void)
{
    uint64_t avail = meminfo_available(), keep = avail / 8 + (2ULL << 30);
    return avail == UINT64_MAX ? UINT64_MAX : avail > keep ? avail - keep : 0;
}

/* A chunk of size bytes, its pages populated unless empty: -1 on failure. */
static int make_chunk(uint64_t size, bool populate)
{
    int fd = memfd_create(SWAPLINE_CHUNK_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -1;
    /* its size is fixed: a model cannot shrink the daemon's accounting */
    if (ftruncate(fd, (off_t)size) < 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
        close(fd);
        return -1;
    }
    if (!populate)
        return fd;
    char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        close(fd);
        return -1;
    }
    madvise(p, size, MADV_HUGEPAGE); /* where shmem may use huge pages */
    if (madvise(p, size, MADV_POPULATE_WRITE) != 0) /* before Linux 5.14 */
        for (uint64_t o = 0; o < size; o += 4096)
            p[o] = 0;
    munmap(p, size); /* the pages stay in the memfd */
    return fd;
}

/* Its pages freed now, whoever still maps it (a model that ignored the
 * request to let go faults in zeros of its own), then closed. */
static void free_chunk(struct chunk c)
{
    fallocate(c.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)c.size);
    close(c.fd);
}

/* The bytes of the last n chunks of o. */
static uint64_t hostpool_tail(const struct owned *o, unsigned n)
{
    uint64_t b = 0;
    for (unsigned i = o->n - n; i < o->n; i++)
        b += o->c[i].size;
    return b;
}

static bool want_fill(const struct hostpool *p)
{
    return p->spare_b + p->filling < p->target && p->nspare < SPARES &&
           p->spare_b + p->filling + p->given + p->freeing + p->charged + p->chunk <= p->limit;
}

static void *run(void *arg)
{
    struct hostpool *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->quit) {
        if (p->nfree) {
            struct chunk c = p->freeq[--p->nfree];
            pthread_mutex_unlock(&p->mu);
            free_chunk(c);
            pthread_mutex_lock(&p->mu);
            p->freeing -= c.size;
            p->freed += c.size;
            pthread_cond_broadcast(&p->cv);
            continue;
        }
        if (!want_fill(p)) {
            pthread_cond_wait(&p->cv, &p->mu);
            continue;
        }
        uint64_t size = p->chunk;
        if (ram_for_pool() < size) {
            if (!p->short_said) {
                char a[32];
                log_msg(LOG_LV_WARN,
                        "host pool: RAM is short (%s can be spared), no spare memory for fast "
                        "swap now: the next suspends may be slower, or use the driver's checkpoint",
                        units_fmt_size(ram_for_pool(), a, sizeof a));
            }
            p->short_said = true;
            struct timespec t;
            clock_gettime(CLOCK_REALTIME, &t);
            t.tv_sec += 2; /* look again later, or when told */
            pthread_cond_timedwait(&p->cv, &p->mu, &t);
            continue;
        }
        p->short_said = false;
        p->filling += size;
        pthread_mutex_unlock(&p->mu);
        int fd = make_chunk(size, true);
        pthread_mutex_lock(&p->mu);
        p->filling -= size;
        p->made += fd >= 0 ? size : 0;
        if (fd >= 0 && p->nspare < SPARES && !p->quit && p->spare_b < p->target) {
            p->spare[p->nspare++] = (struct chunk){fd, size};
            p->spare_b += size;
        } else if (fd >= 0) { /* no longer wanted (a prepare took the room meanwhile) */
            if (p->nfree < SPARES) {
                p->freeq[p->nfree++] = (struct chunk){fd, size};
                p->freeing += size;
            } else {
                close(fd);
            }
        } else {
            log_msg(LOG_LV_WARN, "host pool: cannot make a chunk of host memory: %s",
                    strerror(errno));
            p->target = 0; /* not again until told */
        }
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

struct hostpool *hostpool_open(uint64_t limit, uint64_t share, char *err, size_t len)
{
    struct hostpool *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    p->limit = limit;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    hostpool_set_chunk(p, share);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned want = cpus >= 8 ? MAX_THREADS : cpus >= 4 ? 2 : 1;
    for (unsigned i = 0; i < want; i++)
        if (pthread_create(&p->th[p->nth], NULL, run, p) == 0)
            p->nth++;
    if (!p->nth) {
        snprintf(err, len, "cannot start the host pool's threads");
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->cv);
        free(p);
        return NULL;
    }
    return p;
}

void hostpool_close(struct hostpool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->quit = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->nth; i++)
        pthread_join(p->th[i], NULL);
    for (unsigned i = 0; i < p->nspare; i++)
        close(p->spare[i].fd);
    for (unsigned i = 0; i < p->nfree; i++)
        free_chunk(p->freeq[i]);
    for (unsigned o = 0; o < HOSTPOOL_OWNERS; o++)
        for (unsigned i = 0; i < p->own[o].n; i++)
            close(p->own[o].c[i].fd);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}

void hostpool_set_chunk(struct hostpool *p, uint64_t share)
{
    uint64_t c = HOSTPOOL_MIN_CHUNK;
    while (c < share / 48 && c < (4ULL << 30))
        c *= 2;
    pthread_mutex_lock(&p->mu);
    p->chunk = c; /* for chunks made from now on */
    pthread_mutex_unlock(&p->mu);
}

void hostpool_set_spare(struct hostpool *p, uint64_t bytes)
{
    pthread_mutex_lock(&p->mu);
    if (bytes != p->target) {
        p->target = bytes;
        /* spares over the target go back (the largest model left, say) */
        while (p->nspare && p->spare_b - p->spare[p->nspare - 1].size >= bytes &&
               p->nfree < SPARES) {
            struct chunk c = p->spare[--p->nspare];
            p->spare_b -= c.size;
            p->freeq[p->nfree++] = c;
            p->freeing += c.size;
        }
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
}

static int give(struct hostpool *p, unsigned owner, uint64_t bytes, int *fds, unsigned max,
                unsigned *n, bool some, char *err, size_t len)
{
    *n = 0;
    if (owner >= HOSTPOOL_OWNERS) {
        snprintf(err, len, "no such model");
        return -1;
    }
    struct owned *o = &p->own[owner];
    char a[32], b[32];
    if (max > OWNER_CHUNKS - o->n)
        max = OWNER_CHUNKS - o->n;
    /* the populated spares first, the largest last taken first */
    uint64_t got = 0, fresh = 0;
    unsigned from_spare = 0;
    pthread_mutex_lock(&p->mu);
    while (got < bytes && from_spare < max && p->nspare) {
        struct chunk c = p->spare[--p->nspare];
        p->spare_b -= c.size;
        p->given += c.size;
        o->c[o->n++] = c;
        fds[(*n)++] = c.fd;
        got += c.size;
        from_spare++;
    }
    /* the rest new and unpopulated: the model's pinning faults the pages in
     * (slower, but no RAM is taken before it is needed) */
    unsigned room = max - from_spare;
    uint64_t left = got < bytes ? bytes - got : 0;
    unsigned k = (unsigned)((left + p->chunk - 1) / p->chunk);
    if (k > room)
        k = room; /* past what one request carries: the model makes up the rest */
    fresh = (uint64_t)k * p->chunk;
    uint64_t total = p->spare_b + p->filling + p->given + p->freeing + p->charged;
    bool over = fresh && total + fresh > p->limit;
    if (over && some) { /* what the limit still has room for, in whole chunks */
        k = (unsigned)((p->limit > total ? p->limit - total : 0) / p->chunk);
        fresh = (uint64_t)k * p->chunk;
        over = false;
    }
    if (!over)
        p->given += fresh;
    /* what was taken is not made again until the daemon says so (set_spare
     * after the move): refilled at once, it was freed again when a model
     * readied in steps lowered the target after each step */
    p->target = p->target > got ? p->target - got : 0;
    pthread_mutex_unlock(&p->mu);
    if (over) {
        char c[32];
        snprintf(err, len, "the limit of %s (host_budget) is reached: %s held by models, %s spare",
                 units_fmt_size(p->limit, a, sizeof a), units_fmt_size(total - p->spare_b, b, sizeof b),
                 units_fmt_size(p->spare_b, c, sizeof c));
        goto undo;
    }
    if (fresh && some && ram_for_pool() < fresh) {
        k = (unsigned)(ram_for_pool() / p->chunk);
        pthread_mutex_lock(&p->mu);
        p->given -= fresh - (uint64_t)k * p->chunk;
        pthread_mutex_unlock(&p->mu);
        fresh = (uint64_t)k * p->chunk;
    }
    if (fresh && ram_for_pool() < fresh) {
        snprintf(err, len, "%s of host RAM is needed, %s can be spared",
                 units_fmt_size(fresh, a, sizeof a), units_fmt_size(ram_for_pool(), b, sizeof b));
        goto undo_fresh;
    }
    for (unsigned i = 0; i < k; i++) {
        int fd = make_chunk(p->chunk, false);
        if (fd < 0) {
            snprintf(err, len, "cannot make a chunk of host memory: %s", strerror(errno));
            fresh -= (uint64_t)i * p->chunk; /* those made go back below, as chunks */
            goto undo_fresh;
        }
        o->c[o->n++] = (struct chunk){fd, p->chunk};
        fds[(*n)++] = fd;
    }
    return 0;
undo_fresh:
    pthread_mutex_lock(&p->mu);
    p->given -= fresh; /* those never made */
    pthread_mutex_unlock(&p->mu);
undo:
    /* what was taken goes back (freed: a spare given once is not a spare) */
    hostpool_keep(p, owner, hostpool_given(p, owner) - hostpool_tail(o, *n));
    *n = 0;
    return -1;
}

int hostpool_give(struct hostpool *p, unsigned owner, uint64_t bytes, int *fds, unsigned max,
                  unsigned *n, char *err, size_t len)
{
    return give(p, owner, bytes, fds, max, n, false, err, len);
}

int hostpool_give_some(struct hostpool *p, unsigned owner, uint64_t bytes, int *fds,
                       unsigned max, unsigned *n, char *err, size_t len)
{
    return give(p, owner, bytes, fds, max, n, true, err, len);
}

int hostpool_charge(struct hostpool *p, unsigned owner, uint64_t bytes, bool force, char *err,
                    size_t len)
{
    if (owner >= HOSTPOOL_OWNERS) {
        snprintf(err, len, "no such model");
        return -1;
    }
    pthread_mutex_lock(&p->mu);
    uint64_t total = p->spare_b + p->filling + p->given + p->freeing + p->charged;
    /* the spare is the pool's own to let go of: it makes room */
    uint64_t others = total - p->spare_b;
    bool ok = others + bytes <= p->limit;
    if (ok || force) {
        p->charged += bytes;
        p->own[owner].charged += bytes;
        p->target = 0; /* the spare gives way */
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    if (!ok) {
        char a[32], b[32], c[32];
        snprintf(err, len, "%s of host memory for the driver's checkpoint: the limit of %s "
                           "(host_budget) has %s left",
                 units_fmt_size(bytes, a, sizeof a), units_fmt_size(p->limit, b, sizeof b),
                 units_fmt_size(p->limit > others ? p->limit - others : 0, c, sizeof c));
        return -1;
    }
    return 0;
}

void hostpool_set_limit(struct hostpool *p, uint64_t limit)
{
    pthread_mutex_lock(&p->mu);
    p->limit = limit;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

uint64_t hostpool_room(const struct hostpool *p)
{
    pthread_mutex_lock((pthread_mutex_t *)&p->mu);
    uint64_t used = p->filling + p->given + p->freeing + p->charged;
    uint64_t r = p->limit > used ? p->limit - used : 0;
    pthread_mutex_unlock((pthread_mutex_t *)&p->mu);
    return r;
}

uint64_t hostpool_given(const struct hostpool *p, unsigned owner)
{
    uint64_t b = 0;
    if (owner < HOSTPOOL_OWNERS)
        for (unsigned i = 0; i < p->own[owner].n; i++)
            b += p->own[owner].c[i].size;
    return b;
}

void hostpool_keep(struct hostpool *p, unsigned owner, uint64_t bytes)
{
    if (owner >= HOSTPOOL_OWNERS)
        return;
    struct owned *o = &p->own[owner];
    unsigned keep = 0;
    for (uint64_t at = 0; keep < o->n && at < bytes; keep++)
        at += o->c[keep].size;
    pthread_mutex_lock(&p->mu);
    for (unsigned i = keep; i < o->n; i++) {
        p->given -= o->c[i].size;
        if (p->nfree < SPARES) {
            p->freeq[p->nfree++] = o->c[i];
            p->freeing += o->c[i].size;
        } else {
            close(o->c[i].fd); /* its pages go when the model lets go */
        }
    }
    o->n = keep;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void hostpool_release(struct hostpool *p, unsigned owner)
{
    hostpool_keep(p, owner, 0);
    if (owner >= HOSTPOOL_OWNERS)
        return;
    pthread_mutex_lock(&p->mu);
    p->charged -= p->own[owner].charged;
    p->own[owner].charged = 0;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

uint64_t hostpool_charged(const struct hostpool *p, unsigned owner)
{
    return owner < HOSTPOOL_OWNERS ? p->own[owner].charged : 0;
}

void hostpool_stats(const struct hostpool *p, struct hostpool_stats *s)
{
    pthread_mutex_lock((pthread_mutex_t *)&p->mu);
    *s = (struct hostpool_stats){.limit = p->limit,
                                 .chunk = p->chunk,
                                 .spare = p->spare_b,
                                 .filling = p->filling,
                                 .given = p->given,
                                 .freeing = p->freeing,
                                 .charged = p->charged,
                                 .made = p->made,
                                 .freed = p->freed};
    pthread_mutex_unlock((pthread_mutex_t *)&p->mu);
}
