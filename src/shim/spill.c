/* spill: the disk tier's copies (shim/spill.h). Each of SLOTS staging
 * buffers has an I/O thread: going out, the GPU fills a buffer while the
 * threads write the ones before it; coming back, the threads read ahead
 * while the GPU takes the buffer that is ready. The disk is the slow end,
 * so it is kept busy with SLOTS requests in flight (NVMe drives reach
 * their rate only with several). */
#include "shim/spill.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim/driver.h"

#define SLOTS      4
#define SLOT_BYTES (32ULL << 20)
#define ALIGN      4096 /* what direct I/O asks of offsets, lengths and buffers */

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum job { JOB_NONE, JOB_READ, JOB_WRITE, JOB_QUIT };

struct slot {
    pthread_t t;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int fd;
    char *buf; /* staging: SLOT_BYTES, pinned; NULL when host memory is written as it is */
    enum job job;
    char *at; /* where a job reads into or writes from */
    uint64_t off, n;
    bool busy;
    int err; /* errno of this slot's first failure, kept until the end */
};

struct ring {
    struct slot s[SLOTS];
    unsigned nthreads;
    char *mem; /* the staging buffers, one mapping */
    bool pinned;
};

/* The whole of n bytes at off, or errno (EIO for a file that ends early). */
static int io_all(int fd, char *p, uint64_t n, uint64_t off, bool write)
{
    while (n) {
        ssize_t r = write ? pwrite(fd, p, n, (off_t)off) : pread(fd, p, n, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return errno;
        if (r == 0)
            return EIO;
        p += r;
        n -= (uint64_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

static void *io_thread(void *arg)
{
    struct slot *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->busy)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->job == JOB_QUIT)
            break;
        enum job j = s->job;
        char *at = s->at;
        uint64_t off = s->off, n = s->n;
        pthread_mutex_unlock(&s->mu);
        int e = io_all(s->fd, at, n, off, j == JOB_WRITE);
        pthread_mutex_lock(&s->mu);
        if (e && !s->err)
            s->err = e;
        s->busy = false;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Waits until slot s has no job; its error so far. */
static int idle(struct slot *s)
{
    pthread_mutex_lock(&s->mu);
    while (s->busy)
        pthread_cond_wait(&s->cv, &s->mu);
    int e = s->err;
    pthread_mutex_unlock(&s->mu);
    return e;
}

static void post(struct slot *s, enum job j, char *at, uint64_t off, uint64_t n)
{
    pthread_mutex_lock(&s->mu);
    s->job = j;
    s->at = at;
    s->off = off;
    s->n = n;
    s->busy = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* The threads, and with staging the buffers, pinned (the GPU copies at
 * its rate only to and from pinned memory; a context must be current). 0,
 * or -1 with err. */
static int ring_open(struct ring *r, int fd, bool staging, char *err, size_t len)
{
    memset(r, 0, sizeof *r);
    if (staging) {
        size_t bytes = SLOTS * SLOT_BYTES;
        r->mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (r->mem == MAP_FAILED) {
            r->mem = NULL;
            snprintf(err, len, "no host memory for the disk tier's staging buffers (%s)",
                     strerror(errno));
            return -1;
        }
        madvise(r->mem, bytes, MADV_POPULATE_WRITE);
        r->pinned = real_cuMemHostRegister_v2 &&
                    real_cuMemHostRegister_v2(r->mem, bytes, 1 /* PORTABLE */) == CUDA_SUCCESS;
    }
    for (unsigned i = 0; i < SLOTS; i++) {
        struct slot *s = &r->s[i];
        s->fd = fd;
        s->buf = r->mem ? r->mem + i * SLOT_BYTES : NULL;
        pthread_mutex_init(&s->mu, NULL);
        pthread_cond_init(&s->cv, NULL);
        if (pthread_create(&s->t, NULL, io_thread, s) != 0)
            break;
        r->nthreads++;
    }
    if (r->nthreads)
        return 0;
    snprintf(err, len, "no thread for the disk tier's copies");
    return -1;
}

/* Stops the threads, frees the buffers: the first error of any slot, as
 * an errno (0: none). */
static int ring_close(struct ring *r)
{
    int e = 0;
    for (unsigned i = 0; i < r->nthreads; i++) {
        int x = idle(&r->s[i]);
        e = e ? e : x;
        post(&r->s[i], JOB_QUIT, NULL, 0, 0);
        pthread_join(r->s[i].t, NULL);
    }
    for (unsigned i = 0; i < SLOTS; i++) {
        pthread_mutex_destroy(&r->s[i].mu);
        pthread_cond_destroy(&r->s[i].cv);
    }
    if (r->mem) {
        if (r->pinned && real_cuMemHostUnregister)
            real_cuMemHostUnregister(r->mem);
        munmap(r->mem, SLOTS * SLOT_BYTES);
    }
    return e;
}

/* Direct I/O only where every offset and length is aligned; else the page
 * cache, dropped after use (it is host RAM outside host_budget). */
static bool aligned(const struct spill_extent *v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (v[i].off % ALIGN || v[i].n % ALIGN)
            return false;
    return true;
}

static void direct(int fd, bool on)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0 && !!(fl & O_DIRECT) != on)
        fcntl(fd, F_SETFL, on ? fl | O_DIRECT : fl & ~O_DIRECT);
}

static void drop_cache(int fd, bool wrote)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0 && (fl & O_DIRECT))
        return;
    if (wrote)
        fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

static void io_error(int e, bool write, char *err, size_t len)
{
    snprintf(err, len, "%s the spill file failed: %s%s", write ? "writing" : "reading", strerror(e),
             e == ENOSPC || e == EDQUOT ? " (the spill folder's disk is full: lower spill_budget)"
                                        : "");
}

int spill_open(int fd, char *err, size_t len)
{
    struct stat st;
    int fl = fcntl(fd, F_GETFL);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || fl < 0 || (fl & O_ACCMODE) != O_RDWR) {
        snprintf(err, len, "the spill file passed is not a regular file open to read and write");
        return -1;
    }
    char path[40], target[16];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t k = readlink(path, target, sizeof target - 1);
    if (k >= 7 && !strncmp(target, "/memfd:", 7)) { /* RAM, not disk */
        snprintf(err, len, "the spill file passed is a memfd, not a file on disk");
        return -1;
    }
    direct(fd, true); /* refused by tmpfs and some others: the page cache, dropped */
    return 0;
}

int spill_reserve(int fd, uint64_t off, uint64_t end, char *err, size_t len)
{
    int e = end > off ? posix_fallocate(fd, (off_t)off, (off_t)(end - off)) : 0;
    if (e == 0 || e == EOPNOTSUPP || e == EINVAL)
        return 0; /* a filesystem without it finds a full disk at the write */
    io_error(e, true, err, len);
    return -1;
}

/* Copies one piece between the GPU and staging, on dev's stream, and waits
 * for it. */
static CUresult gpu_copy(spill_enter_fn enter, int dev, char *buf, CUdeviceptr d, uint64_t n,
                         bool to_host)
{
    CUstream s;
    CUresult rc = enter(dev, &s);
    if (rc == CUDA_SUCCESS)
        rc = to_host ? real_cuMemcpyDtoHAsync_v2(buf, d, n, s)
                     : real_cuMemcpyHtoDAsync_v2(d, buf, n, s);
    if (rc == CUDA_SUCCESS)
        rc = real_cuStreamSynchronize(s);
    return rc;
}

int spill_out(int fd, const struct spill_extent *v, unsigned n, spill_enter_fn enter, char *err,
              size_t len)
{
    struct ring r;
    direct(fd, aligned(v, n));
    if (ring_open(&r, fd, true, err, len) < 0)
        return -1;
    CUresult rc = CUDA_SUCCESS;
    int e = 0;
    unsigned k = 0;
    for (unsigned i = 0; i < n && rc == CUDA_SUCCESS && !e; i++)
        for (uint64_t at = 0; at < v[i].n && rc == CUDA_SUCCESS && !e;) {
            struct slot *s = &r.s[k++ % r.nthreads];
            uint64_t m = v[i].n - at < SLOT_BYTES ? v[i].n - at : SLOT_BYTES;
            if ((e = idle(s)) != 0)
                break;
            if ((rc = gpu_copy(enter, v[i].dev, s->buf, v[i].dptr + at, m, true)) == CUDA_SUCCESS)
                post(s, JOB_WRITE, s->buf, v[i].off + at, m);
            at += m;
        }
    int e2 = ring_close(&r);
    e = e ? e : e2;
    if (rc != CUDA_SUCCESS) {
        snprintf(err, len, "copying GPU memory to the spill file's staging failed (error %d)", rc);
        return -1;
    }
    if (e) {
        io_error(e, true, err, len);
        return -1;
    }
    drop_cache(fd, true);
    return 0;
}

int spill_in(int fd, const struct spill_extent *v, unsigned n, spill_enter_fn enter, char *err,
             size_t len)
{
    struct ring r;
    direct(fd, aligned(v, n));
    if (ring_open(&r, fd, true, err, len) < 0)
        return -1;
    /* the pieces in order, read SLOTS ahead: piece p is in slot p % SLOTS */
    struct piece {
        unsigned i;
        uint64_t at, m;
    } q[SLOTS];
    unsigned next_i = 0;
    uint64_t next_at = 0;
    unsigned posted = 0, taken = 0;
    bool more = true;
    CUresult rc = CUDA_SUCCESS;
    int e = 0;
    for (;;) {
        while (more && posted - taken < r.nthreads) { /* reads ahead */
            while (next_i < n && next_at >= v[next_i].n) {
                next_i++;
                next_at = 0;
            }
            if (next_i == n) {
                more = false;
                break;
            }
            uint64_t m = v[next_i].n - next_at < SLOT_BYTES ? v[next_i].n - next_at : SLOT_BYTES;
            struct slot *s = &r.s[posted % r.nthreads];
            q[posted % r.nthreads] = (struct piece){next_i, next_at, m};
            post(s, JOB_READ, s->buf, v[next_i].off + next_at, m);
            next_at += m;
            posted++;
        }
        if (taken == posted)
            break;
        struct slot *s = &r.s[taken % r.nthreads];
        struct piece p = q[taken % r.nthreads];
        if ((e = idle(s)) != 0)
            break;
        rc = gpu_copy(enter, v[p.i].dev, s->buf, v[p.i].dptr + p.at, p.m, false);
        if (rc != CUDA_SUCCESS)
            break;
        taken++;
    }
    int e2 = ring_close(&r);
    e = e ? e : e2;
    drop_cache(fd, false);
    if (rc != CUDA_SUCCESS) {
        snprintf(err, len, "copying the spill file's staging to the GPU failed (error %d)", rc);
        return -1;
    }
    if (e) {
        io_error(e, false, err, len);
        return -1;
    }
    return 0;
}

int spill_write_host(int fd, const struct spill_host *v, unsigned n, char *err, size_t len)
{
    struct ring r;
    bool ok = true;
    for (unsigned i = 0; i < n; i++)
        ok &= v[i].off % ALIGN == 0 && v[i].n % ALIGN == 0 && (uintptr_t)v[i].p % ALIGN == 0;
    direct(fd, ok);
    if (ring_open(&r, fd, false, err, len) < 0)
        return -1;
    int e = 0;
    unsigned k = 0;
    for (unsigned i = 0; i < n && !e; i++)
        for (uint64_t at = 0; at < v[i].n && !e;) {
            struct slot *s = &r.s[k++ % r.nthreads];
            uint64_t m = v[i].n - at < SLOT_BYTES ? v[i].n - at : SLOT_BYTES;
            if ((e = idle(s)) == 0)
                post(s, JOB_WRITE, (char *)v[i].p + at, v[i].off + at, m);
            at += m;
        }
    int e2 = ring_close(&r);
    e = e ? e : e2;
    if (e) {
        io_error(e, true, err, len);
        return -1;
    }
    drop_cache(fd, true);
    return 0;
}
