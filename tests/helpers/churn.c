/* churn: the traffic of a busy group, for the stress test of its cap
 * (tests/cli/joinstress.sh). Loads libcuda.so.1 as frameworks do.
 *   churn alloc COUNT SEED GO [STOP]
 *                                makes its context (again while the group
 *                                refuses it, until STOP), says "ready", waits for
 *                                the file GO, then allocates and frees at
 *                                random (1 to 64 MiB), keeping the group
 *                                full, until COUNT allocations have
 *                                succeeded or the file STOP exists; prints
 *                                "allocs N refused M"
 *   churn join [SIZE]            makes a context (and allocates SIZE), then
 *                                exits: 0 joined, 3 refused
 *   churn spawn N STOP_FILE      keeps N processes joining (as `churn join
 *                                2M`, staying 50 to 250 ms) and leaving
 *                                until STOP_FILE exists; prints
 *                                "joins J refused R". They are forks of a
 *                                process that never loaded libcuda: each is
 *                                a new process to the driver and the group,
 *                                without an exec's start-up cost */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/units.h"
#include "gpu/cuda_api.h"

static CUresult (*cuInit_)(unsigned);
static CUresult (*cuDeviceGet_)(CUdevice *, int);
static CUresult (*retain_)(CUcontext *, CUdevice);
static CUresult (*create_)(CUcontext *, unsigned, CUdevice);
static CUresult (*setcur_)(CUcontext);
static CUresult (*alloc_)(CUdeviceptr *, size_t);
static CUresult (*free_)(CUdeviceptr);

static int load(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "churn: %s\n", dlerror());
        return -1;
    }
    *(void **)&cuInit_ = dlsym(lib, "cuInit");
    *(void **)&cuDeviceGet_ = dlsym(lib, "cuDeviceGet");
    *(void **)&retain_ = dlsym(lib, "cuDevicePrimaryCtxRetain");
    *(void **)&create_ = dlsym(lib, "cuCtxCreate_v2");
    *(void **)&setcur_ = dlsym(lib, "cuCtxSetCurrent");
    *(void **)&alloc_ = dlsym(lib, "cuMemAlloc_v2");
    *(void **)&free_ = dlsym(lib, "cuMemFree_v2");
    return cuInit_ && cuDeviceGet_ && retain_ && create_ && setcur_ && alloc_ && free_ &&
                   cuInit_(0) == CUDA_SUCCESS
               ? 0
               : -1;
}

/* A context as the runtime makes it (primary) or as some programs do. */
static int context(int primary)
{
    CUdevice dev;
    CUcontext ctx;
    if (cuDeviceGet_(&dev, 0) != CUDA_SUCCESS)
        return -1;
    CUresult rc = primary ? retain_(&ctx, dev) : create_(&ctx, 0, dev);
    if (rc != CUDA_SUCCESS)
        return (int)rc;
    return setcur_(ctx) == CUDA_SUCCESS ? 0 : -1;
}

static int do_alloc(unsigned long long count, unsigned seed, const char *go, const char *stop)
{
    int rc = load() < 0 ? -1 : context(1);
    /* a group its joiners fill refuses the context for now: as a
     * framework's retry would, until one leaves (or the run ends) */
    while (rc == CUDA_ERROR_OUT_OF_MEMORY && stop && access(stop, F_OK) != 0) {
        usleep(10000);
        rc = context(1);
    }
    if (rc != 0) {
        printf("no context (%d)\n", rc);
        return 3;
    }
    printf("ready\n");
    fflush(stdout);
    while (access(go, F_OK) != 0)
        usleep(1000);
    enum { HELD = 512 };
    CUdeviceptr held[HELD];
    int n = 0;
    unsigned long long allocs = 0, refused = 0;
    srand(seed);
    for (unsigned long long turn = 1; allocs < count; turn++) {
        /* a group full of others' contexts refuses every allocation: a
         * real GPU's contexts are large, and only a deadline ends that */
        if (stop && turn % 1024 == 0 && access(stop, F_OK) == 0)
            break;
        /* more allocating than freeing: the group stays at its cap */
        if (n == HELD || (n > 0 && rand() % 8 < 3)) {
            int k = rand() % n;
            free_(held[k]);
            held[k] = held[--n];
            continue;
        }
        size_t size = (size_t)(1 + rand() % 64) << 20;
        if (alloc_(&held[n], size) == CUDA_SUCCESS) {
            n++;
            allocs++;
        } else {
            refused++;
        }
    }
    printf("allocs %llu refused %llu\n", allocs, refused);
    return 0;
}

static int do_join(const char *size)
{
    uint64_t bytes = 0;
    if (size && units_parse_size(size, &bytes) < 0)
        return 2;
    if (load() < 0 || context(getpid() & 1) != 0)
        return 3;
    CUdeviceptr p;
    if (bytes && alloc_(&p, bytes) != CUDA_SUCCESS)
        return 3;
    return 0;
}

static int do_spawn(int n, const char *stop)
{
    unsigned long long joins = 0, refused = 0;
    int running = 0;
    for (;;) {
        int stopping = access(stop, F_OK) == 0;
        while (!stopping && running < n) {
            pid_t pid = fork();
            if (pid == 0) {
                int rc = do_join("2M");
                srand((unsigned)getpid());
                usleep((useconds_t)(50000 + rand() % 200000));
                _exit(rc);
            }
            if (pid > 0)
                running++;
            else
                break;
        }
        if (running == 0)
            break;
        int st;
        if (wait(&st) < 0)
            break;
        running--;
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
            joins++;
        else
            refused++;
    }
    printf("joins %llu refused %llu\n", joins, refused);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && !strcmp(argv[1], "alloc"))
        return do_alloc(strtoull(argv[2], NULL, 10), (unsigned)atoi(argv[3]), argv[4],
                        argc > 5 ? argv[5] : NULL);
    if (argc >= 2 && !strcmp(argv[1], "join"))
        return do_join(argc > 2 ? argv[2] : NULL);
    if (argc >= 4 && !strcmp(argv[1], "spawn"))
        return do_spawn(atoi(argv[2]), argv[3]);
    fprintf(stderr, "usage: churn alloc COUNT SEED GO [STOP] | churn join [SIZE] | churn spawn N STOP\n");
    return 2;
}
