/* pool_cost: what pinned host memory costs to get and how fast copies into
 * it run, the facts fast swap's host pool is designed on. For SIZE bytes:
 *   - cuMemHostAlloc (the runtime's cudaHostAlloc),
 *   - mmap + populate with K threads (huge pages asked for, and not) +
 *     cuMemHostRegister,
 * then device->host and host->device copy rates into each, with pieces of
 * 64 and 512 MiB over 1 and 4 streams.
 * usage: vram-pool-cost [SIZE_GIB] */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "gpu/cuda_api.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static CUresult (*cuInit_)(unsigned);
static CUresult (*devget)(CUdevice *, int);
static CUresult (*retain)(CUcontext *, CUdevice);
static CUresult (*setcur)(CUcontext);
static CUresult (*halloc)(void **, size_t, unsigned);
static CUresult (*hfree)(void *);
static CUresult (*hreg)(void *, size_t, unsigned);
static CUresult (*hunreg)(void *);
static CUresult (*dalloc)(CUdeviceptr *, size_t);
static CUresult (*screate)(CUstream *, unsigned);
static CUresult (*ssync)(CUstream);
static CUresult (*d2h)(void *, CUdeviceptr, size_t, CUstream);
static CUresult (*h2d)(CUdeviceptr, const void *, size_t, CUstream);

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

struct fill {
    char *p;
    size_t n;
};

static void *fill(void *arg)
{
    struct fill *f = arg;
    if (madvise(f->p, f->n, MADV_POPULATE_WRITE) != 0)
        for (size_t o = 0; o < f->n; o += 4096)
            f->p[o] = 0;
    return NULL;
}

static void populate(char *p, size_t size, int k)
{
    pthread_t t[64];
    struct fill f[64];
    size_t slice = (size / k + (2 << 20) - 1) & ~((size_t)(2 << 20) - 1);
    int n = 0;
    for (int i = 0; i < k && (size_t)i * slice < size; i++, n++) {
        size_t off = (size_t)i * slice;
        f[i] = (struct fill){p + off, size - off < slice ? size - off : slice};
        pthread_create(&t[i], NULL, fill, &f[i]);
    }
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
}

static CUstream st[4];

static double rate(char *host, CUdeviceptr dev, size_t size, size_t piece, int streams, int out)
{
    double t0 = now();
    int k = 0;
    for (size_t o = 0; o < size; o += piece, k++) {
        size_t n = size - o < piece ? size - o : piece;
        if (out)
            d2h(host + o, dev + o, n, st[k % streams]);
        else
            h2d(dev + o, host + o, n, st[k % streams]);
    }
    for (int i = 0; i < streams; i++)
        ssync(st[i]);
    return size / (now() - t0) / 1e9;
}

static void rates(const char *what, char *host, CUdeviceptr dev, size_t size)
{
    printf("%-28s", what);
    size_t pieces[] = {64u << 20, 512u << 20};
    for (int pi = 0; pi < 2; pi++)
        for (int s = 1; s <= 4; s += 3)
            printf("  %3zuM/%d: out %5.1f in %5.1f", pieces[pi] >> 20, s,
                   rate(host, dev, size, pieces[pi], s, 1),
                   rate(host, dev, size, pieces[pi], s, 0));
    printf("  GB/s\n");
}

#define SYM(v, n)                                                                                  \
    if (!(*(void **)&v = dlsym(lib, n))) {                                                         \
        printf("no %s\n", n);                                                                      \
        return 1;                                                                                  \
    }

int main(int argc, char **argv)
{
    size_t size = (size_t)(argc > 1 ? atof(argv[1]) : 16) * (1ull << 30);
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib)
        return 3;
    SYM(cuInit_, "cuInit");
    SYM(devget, "cuDeviceGet");
    SYM(retain, "cuDevicePrimaryCtxRetain");
    SYM(setcur, "cuCtxSetCurrent");
    SYM(halloc, "cuMemHostAlloc");
    SYM(hfree, "cuMemFreeHost");
    SYM(hreg, "cuMemHostRegister_v2");
    SYM(hunreg, "cuMemHostUnregister");
    SYM(dalloc, "cuMemAlloc_v2");
    SYM(screate, "cuStreamCreate");
    SYM(ssync, "cuStreamSynchronize");
    SYM(d2h, "cuMemcpyDtoHAsync_v2");
    SYM(h2d, "cuMemcpyHtoDAsync_v2");
    CUdevice d;
    CUcontext c;
    CUdeviceptr dev;
    if (cuInit_(0) || devget(&d, 0) || retain(&c, d) || setcur(c) || dalloc(&dev, size))
        return 3;
    for (int i = 0; i < 4; i++)
        screate(&st[i], 1);
    printf("%.0f GiB\n", size / 1073741824.0);
    void *h;
    double t0 = now();
    if (halloc(&h, size, 0) == 0) {
        printf("cuMemHostAlloc                %.2f s\n", now() - t0);
        rates("  copies, cuMemHostAlloc", h, dev, size);
        t0 = now();
        hfree(h);
        printf("cuMemFreeHost                 %.2f s\n", now() - t0);
    }
    int ks[] = {1, 8, 16};
    for (int huge = 1; huge >= 0; huge--)
        for (int ki = 0; ki < 3; ki++) {
            if (!huge && ki != 1)
                continue;
            char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            madvise(p, size, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
            t0 = now();
            populate(p, size, ks[ki]);
            double t1 = now();
            CUresult rc = hreg(p, size, 1);
            double t2 = now();
            printf("mmap %s, %2d threads: populate %.2f s, register %.2f s (rc %d)\n",
                   huge ? "huge" : "4K  ", ks[ki], t1 - t0, t2 - t1, rc);
            if (rc == 0 && ki == 1)
                rates(huge ? "  copies, registered huge" : "  copies, registered 4K", p, dev, size);
            t0 = now();
            hunreg(p);
            munmap(p, size);
            printf("  unregister + unmap %.2f s\n", now() - t0);
        }
    return 0;
}
