/* alloc_latency: cuMemAlloc and cuMemFree latency, as a program that looks
 * the driver up with dlsym sees it: run it bare and under libvramcap to see
 * what the library adds. Prints medians in nanoseconds. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gpu/cuda_api.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    size_t size = argc > 2 ? (size_t)atol(argv[2]) : (size_t)2 << 20;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib || n < 10)
        return 1;
    CUresult (*init)(unsigned) = (CUresult(*)(unsigned))dlsym(lib, "cuInit");
    CUresult (*get)(CUdevice *, int) = (CUresult(*)(CUdevice *, int))dlsym(lib, "cuDeviceGet");
    CUresult (*retain)(CUcontext *, CUdevice) =
        (CUresult(*)(CUcontext *, CUdevice))dlsym(lib, "cuDevicePrimaryCtxRetain");
    CUresult (*setcur)(CUcontext) = (CUresult(*)(CUcontext))dlsym(lib, "cuCtxSetCurrent");
    CUresult (*alloc)(CUdeviceptr *, size_t) =
        (CUresult(*)(CUdeviceptr *, size_t))dlsym(lib, "cuMemAlloc_v2");
    CUresult (*release)(CUdeviceptr) = (CUresult(*)(CUdeviceptr))dlsym(lib, "cuMemFree_v2");
    CUdevice dev;
    CUcontext ctx;
    if (init(0) || get(&dev, 0) || retain(&ctx, dev) || setcur(ctx))
        return 1;
    double *ta = malloc((size_t)n * sizeof *ta), *tf = malloc((size_t)n * sizeof *tf);
    if (!ta || !tf)
        return 1;
    for (int i = -n / 10; i < n; i++) { /* a tenth as warm-up */
        CUdeviceptr p;
        double t0 = now_ns();
        if (alloc(&p, size))
            return 1;
        double t1 = now_ns();
        release(p);
        double t2 = now_ns();
        if (i >= 0)
            ta[i] = t1 - t0, tf[i] = t2 - t1;
    }
    qsort(ta, (size_t)n, sizeof *ta, cmp);
    qsort(tf, (size_t)n, sizeof *tf, cmp);
    printf("%.0f %.0f %.0f %.0f\n", ta[n / 2], tf[n / 2], ta[n * 99 / 100], tf[n * 99 / 100]);
    return 0;
}
