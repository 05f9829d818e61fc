/* hammer: many threads allocating from one simulated GPU at once until the
 * driver (or libvramcap) says no, then holding it all: the test adds up what
 * the processes of a group really hold and checks it never passes the cap.
 * usage: hammer THREADS CHUNK GO_FILE. Prints "ctx" once it has a context,
 * starts when GO_FILE exists (so that several processes start at the same
 * instant), prints "done BYTES" and holds it all until killed. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/units.h"
#include "gpu/cuda_api.h"

static CUresult (*cuInit_)(unsigned);
static CUresult (*cuDeviceGet_)(CUdevice *, int);
static CUresult (*cuCtxCreate_)(CUcontext *, unsigned, CUdevice);
static CUresult (*cuCtxSetCurrent_)(CUcontext);
static CUresult (*cuMemAlloc_)(CUdeviceptr *, size_t);
static CUcontext ctx;
static uint64_t chunk = 64 << 20;
static atomic_ullong held;
static pthread_barrier_t go;

static void *worker(void *arg)
{
    (void)arg;
    cuCtxSetCurrent_(ctx);
    pthread_barrier_wait(&go);
    CUdeviceptr p;
    while (cuMemAlloc_(&p, chunk) == CUDA_SUCCESS)
        atomic_fetch_add(&held, chunk);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    if (argc > 2 && units_parse_size(argv[2], &chunk) < 0)
        return 2;
    if (threads < 1 || threads > 64)
        return 2;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib)
        return 1;
    *(void **)&cuInit_ = dlsym(lib, "cuInit");
    *(void **)&cuDeviceGet_ = dlsym(lib, "cuDeviceGet");
    *(void **)&cuCtxCreate_ = dlsym(lib, "cuCtxCreate_v2");
    *(void **)&cuCtxSetCurrent_ = dlsym(lib, "cuCtxSetCurrent");
    *(void **)&cuMemAlloc_ = dlsym(lib, "cuMemAlloc_v2");
    CUdevice dev;
    if (cuInit_(0) || cuDeviceGet_(&dev, 0) || cuCtxCreate_(&ctx, 0, dev)) {
        printf("no context\n");
        fflush(stdout);
        return 3;
    }
    printf("ctx\n");
    fflush(stdout);
    while (argc > 3 && access(argv[3], F_OK) != 0)
        usleep(1000);
    pthread_t t[64];
    pthread_barrier_init(&go, NULL, (unsigned)threads);
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    printf("done %llu\n", (unsigned long long)atomic_load(&held));
    fflush(stdout);
    for (;;)
        pause();
}
