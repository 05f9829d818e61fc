/* devmem: the simulated card's memory, as the process holds it.
 *
 * A GPU's memory is there before an allocation and stays after a free.
 * Host memory is not: the first touch of a page through a new mapping
 * costs a page fault, and where the machine is a VM with shadow page
 * tables or one that gives freed pages back to its host, a very slow one
 * (measured on the CI machines: 20 s a GiB, while a copy into memory
 * already mapped runs at 2-4 GB/s; bench/RESULTS.md). Every simulated
 * copy into freshly mapped device memory paid that, so a resume by fast
 * swap (its memory freed on suspend, allocated, mapped and copied back on
 * resume) ran at 0.05 GB/s.
 *
 * So device memory keeps its pages and their page-table entries, as a
 * GPU's does:
 *  - a freed linear allocation stays mapped and is handed out again to the
 *    next allocation of its size;
 *  - a physical allocation (a memfd) unmapped whole stays mapped where it
 *    was, made inaccessible (PROT_NONE, which is what a reservation is):
 *    "parked". Mapped there again (fast swap's resume maps at the address
 *    it left), it only becomes accessible again; released, its memfd is
 *    kept with its parks for the next cuMemCreate of its size;
 *  - before either is handed out again it is poisoned, as MALLOC_PERTURB_
 *    does for malloc, so that a resume that failed to copy its bytes back
 *    cannot pass for intact. Only pages that hold data are poisoned: a
 *    sparse 10 GiB allocation still costs the machine nothing. */
#include "sim/devmem.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define KEEP_MAX   64            /* freed blocks kept */
#define KEEP_BYTES (64ULL << 30) /* their address space, all together */
#define PARK_MAX   256
#define POISON     0xa5
#define PAGE       4096u

struct kept {
    void *p; /* a linear block's mapping, or NULL */
    int fd;  /* a physical allocation's memfd, or -1 */
    size_t size;
    int dev; /* a memfd's device */
};

struct park {
    void *addr;
    size_t size;
    int fd;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct kept kept[KEEP_MAX];
static size_t nkept;
static uint64_t kept_bytes;
static struct park parks[PARK_MAX];
static size_t nparks;

static void park_remove(size_t i)
{
    parks[i] = parks[--nparks];
}

/* The memfd closes: its parks become plain reservations again, in place
 * (MAP_FIXED replaces a mapping without a moment's hole). Lock held. */
static void unpark_fd(int fd)
{
    for (size_t i = 0; i < nparks;)
        if (parks[i].fd == fd) {
            mmap(parks[i].addr, parks[i].size, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
            park_remove(i);
        } else {
            i++;
        }
}

static void drop(const struct kept *k)
{
    if (k->p)
        munmap(k->p, k->size);
    if (k->fd >= 0) {
        unpark_fd(k->fd);
        close(k->fd);
    }
}

/* Keeps k, the oldest block going when there is no room. Lock held. */
static void keep(struct kept k)
{
    while (nkept && (nkept == KEEP_MAX || kept_bytes + k.size > KEEP_BYTES)) {
        drop(&kept[0]);
        kept_bytes -= kept[0].size;
        memmove(kept, kept + 1, --nkept * sizeof *kept);
    }
    if (k.size > KEEP_BYTES) {
        drop(&k);
        return;
    }
    kept[nkept++] = k;
    kept_bytes += k.size;
}

/* Takes kept block i out. Lock held. */
static struct kept take_at(size_t i)
{
    struct kept k = kept[i];
    kept_bytes -= k.size;
    memmove(kept + i, kept + i + 1, (--nkept - i) * sizeof *kept);
    return k;
}

/* The newest kept block of size and kind (a memfd of device dev, or a
 * mapping where dev < 0): its pages are the warmest. Its index, or -1.
 * Lock held. */
static long find(size_t size, int dev)
{
    for (size_t i = nkept; i-- > 0;)
        if (kept[i].size == size && (kept[i].fd >= 0) == (dev >= 0) &&
            (dev < 0 || kept[i].dev == dev))
            return (long)i;
    return -1;
}

/* This process's /proc/self/pagemap, opened once per process (a child
 * that inherited the descriptor would read its parent's). Lock held. */
static int pagemap(void)
{
    static int fd = -1;
    static pid_t of;
    if (fd >= 0 && of != getpid()) {
        close(fd);
        fd = -1;
    }
    if (fd < 0) {
        fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
        of = getpid();
    }
    return fd;
}

/* Poisons the pages of [p, p+n) that are backed (written, or swapped
 * out), leaving the rest unbacked; /proc/self/pagemap says which. Lock
 * held. */
static void poison_mapping(unsigned char *p, size_t n)
{
    int fd = pagemap();
    if (fd < 0) {
        memset(p, POISON, n); /* cannot tell: all of it */
        return;
    }
    uint64_t e[512];
    size_t pages = n / PAGE;
    for (size_t at = 0; at < pages;) {
        size_t want = pages - at < 512 ? pages - at : 512;
        off_t off = (off_t)(((uintptr_t)p / PAGE + at) * sizeof e[0]);
        ssize_t got = pread(fd, e, want * sizeof e[0], off);
        if (got <= 0) {
            memset(p + at * PAGE, POISON, n - at * PAGE);
            break;
        }
        size_t k = (size_t)got / sizeof e[0];
        for (size_t i = 0; i < k; i++)
            if (e[i] >> 62) /* bit 63 present, bit 62 swapped */
                memset(p + (at + i) * PAGE, POISON, PAGE);
        at += k;
    }
}

/* The same for a memfd: its data, found with SEEK_DATA, overwritten. */
static void poison_fd(int fd, size_t n)
{
    static const unsigned char poison[64 * 1024] = {[0 ... 64 * 1024 - 1] = POISON};
    for (off_t at = 0; (size_t)at < n;) {
        off_t data = lseek(fd, at, SEEK_DATA);
        if (data < 0)
            break; /* ENXIO: no data past at */
        off_t hole = lseek(fd, data, SEEK_HOLE);
        if (hole < 0)
            hole = (off_t)n;
        for (off_t w = data; w < hole;) {
            size_t len = (size_t)(hole - w) < sizeof poison ? (size_t)(hole - w) : sizeof poison;
            ssize_t put = pwrite(fd, poison, len, w);
            if (put <= 0)
                return;
            w += put;
        }
        at = hole;
    }
}

void *simdevmem_map(size_t size)
{
    pthread_mutex_lock(&mu);
    long i = find(size, -1);
    void *p = i >= 0 ? take_at((size_t)i).p : NULL;
    pthread_mutex_unlock(&mu);
    if (p)
        return p;
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
             0);
    return p == MAP_FAILED ? NULL : p;
}

void simdevmem_unmap(void *p, size_t size)
{
    pthread_mutex_lock(&mu);
    poison_mapping(p, size);
    keep((struct kept){p, -1, size, -1});
    pthread_mutex_unlock(&mu);
}

int simdevmem_fd(size_t size, int dev)
{
    pthread_mutex_lock(&mu);
    long i = find(size, dev);
    int fd = i >= 0 ? take_at((size_t)i).fd : -1;
    pthread_mutex_unlock(&mu);
    if (fd >= 0)
        return fd;
    char name[32];
    snprintf(name, sizeof name, "vram-sim-vmm-d%d", dev);
    fd = memfd_create(name, MFD_CLOEXEC);
    if (fd >= 0 && ftruncate(fd, (off_t)size) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

void simdevmem_fd_release(int fd, size_t size, int dev)
{
    poison_fd(fd, size);
    pthread_mutex_lock(&mu);
    keep((struct kept){NULL, fd, size, dev});
    pthread_mutex_unlock(&mu);
}

void simdevmem_fd_close(int fd)
{
    pthread_mutex_lock(&mu);
    unpark_fd(fd);
    pthread_mutex_unlock(&mu);
    close(fd);
}

bool simdevmem_park(int fd, void *addr, size_t size)
{
    pthread_mutex_lock(&mu);
    bool ok = nparks < PARK_MAX && mprotect(addr, size, PROT_NONE) == 0;
    if (ok)
        parks[nparks++] = (struct park){addr, size, fd};
    pthread_mutex_unlock(&mu);
    return ok;
}

void simdevmem_unpark(void *addr, size_t size)
{
    uintptr_t a = (uintptr_t)addr, b = a + size;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < nparks;) {
        uintptr_t pa = (uintptr_t)parks[i].addr, pb = pa + parks[i].size;
        if (pa < b && a < pb)
            park_remove(i);
        else
            i++;
    }
    pthread_mutex_unlock(&mu);
}

bool simdevmem_place(int *fd, bool swap, int dev, void *addr, size_t size)
{
    pthread_mutex_lock(&mu);
    size_t i = 0;
    while (i < nparks && !(parks[i].addr == addr && parks[i].size == size))
        i++;
    bool hit = i < nparks && parks[i].fd == *fd;
    if (i < nparks && !hit && swap) {
        /* another memfd of this size is parked here: a kept one (a live
         * allocation's park is its own) gives its place to *fd */
        for (size_t k = 0; k < nkept; k++)
            if (kept[k].fd == parks[i].fd && kept[k].dev == dev) {
                struct kept other = take_at(k);
                keep((struct kept){NULL, *fd, size, dev});
                *fd = other.fd;
                hit = true;
                break;
            }
    }
    if (hit && mprotect(addr, size, PROT_READ | PROT_WRITE) == 0)
        park_remove(i);
    else
        hit = false;
    pthread_mutex_unlock(&mu);
    return hit;
}
