/* directmodel: a program linked against libcuda.so.1 itself, as the
 * driver-API parts of some runtimes are (ggml's VMM pool), so its calls to
 * the entry points libvramcap wraps reach the wrappers by name, not
 * through a trampoline. It holds 64 MiB and a thread allocates and frees
 * 4 MiB in a loop; FILE gets "ops N" and "writes W" ten times a second (W
 * counts the writes, as swapmodel's).
 *   directmodel STATUS_FILE */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "gpu/cuda_api.h"

CUresult cuInit(unsigned);
CUresult cuDeviceGet(CUdevice *, int);
CUresult cuCtxCreate_v2(CUcontext *, unsigned, CUdevice);
CUresult cuCtxSetCurrent(CUcontext);
CUresult cuMemAlloc_v2(CUdeviceptr *, size_t);
CUresult cuMemFree_v2(CUdeviceptr);

static CUcontext ctx;
static atomic_ullong ops;

static void *churn(void *arg)
{
    (void)arg;
    cuCtxSetCurrent(ctx);
    for (;;) {
        CUdeviceptr p;
        if (cuMemAlloc_v2(&p, 4u << 20) || cuMemFree_v2(p)) {
            printf("CORRUPT alloc\n");
            fflush(stdout);
            _exit(1);
        }
        atomic_fetch_add(&ops, 1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    CUdevice dev;
    CUdeviceptr w;
    if (argc != 2 || cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate_v2(&ctx, 0, dev) ||
        cuMemAlloc_v2(&w, 64u << 20))
        return 3;
    pthread_t t;
    pthread_create(&t, NULL, churn, NULL);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    /* the count replaces the file whole (a reader never sees it empty) */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
    for (unsigned long long writes = 1;; writes++) {
        FILE *f = fopen(tmp, "w");
        if (f) {
            fprintf(f, "ops %llu\nwrites %llu\n", (unsigned long long)atomic_load(&ops), writes);
            if (fclose(f) == 0)
                rename(tmp, argv[1]);
        }
        usleep(100000);
    }
}
