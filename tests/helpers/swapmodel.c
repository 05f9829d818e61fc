/* swapmodel: a CUDA program as frameworks write them, for fast swap's
 * tests. It finds the driver as the CUDA runtime does (dlopen, then every
 * entry point through cuGetProcAddress), holds "weights" in both kinds of
 * memory fast swap moves (cuMemAlloc, and the VMM calls of PyTorch's
 * expandable segments), and keeps threads working on the GPU the whole
 * time: each fills a buffer of its own and reads it back, and one
 * allocates, checks and frees in a loop. Any byte that is not what was
 * written, or any failed call, prints "CORRUPT ..." and exits 1.
 *   swapmodel [--linear SIZE] [--vmm SIZE] [--managed SIZE] [--workers N]
 *             [--churn] [--status FILE]
 * Prints "ready PID" once set up. SIGUSR1: check every weight byte (the
 * check itself goes through the driver, so it waits while suspended),
 * then print "weights ok". FILE gets "ops N" and "writes W" ten times a
 * second, W counting its writes: a reader that sees W go up twice has an
 * ops N counted after it began waiting. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/units.h"
#include "gpu/cuda_api.h"

#define CHUNK   (32ull << 20)
#define SCRATCH (2u << 20)

static CUresult (*gpa)(const char *, void **, int, cuuint64_t, int *);
static CUresult (*cuInit_)(unsigned);
static CUresult (*cuDeviceGet_)(CUdevice *, int);
static CUresult (*retain)(CUcontext *, CUdevice);
static CUresult (*set_current)(CUcontext);
static CUresult (*mem_alloc)(CUdeviceptr *, size_t);
static CUresult (*mem_free)(CUdeviceptr);
static CUresult (*alloc_managed)(CUdeviceptr *, size_t, unsigned);
static CUresult (*htod)(CUdeviceptr, const void *, size_t);
static CUresult (*dtoh)(void *, CUdeviceptr, size_t);
static CUresult (*memset8)(CUdeviceptr, unsigned char, size_t);
static CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
static CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                          unsigned long long);
static CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                       unsigned long long);
static CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);

static CUcontext ctx;
static CUdeviceptr *weights;
static size_t nweights;
static atomic_ullong ops;
static volatile sig_atomic_t check_asked;

static void corrupt(const char *what, long v)
{
    printf("CORRUPT %s %ld\n", what, v);
    fflush(stdout);
    exit(1);
}

static void find(const char *name, void *fn)
{
    if (gpa(name, (void **)fn, 12000, 0, NULL) != CUDA_SUCCESS || !*(void **)fn) {
        fprintf(stderr, "swapmodel: no %s\n", name);
        exit(3);
    }
}

static unsigned char byte_at(size_t chunk, size_t off)
{
    return (unsigned char)(chunk * 131 + off / 4096 * 7 + 1);
}

static void write_weights(void)
{
    unsigned char *buf = malloc(CHUNK);
    for (size_t c = 0; c < nweights; c++) {
        for (size_t o = 0; o < CHUNK; o++)
            buf[o] = byte_at(c, o);
        if (htod(weights[c], buf, CHUNK))
            corrupt("write", (long)c);
    }
    free(buf);
}

static void check_weights(void)
{
    unsigned char *buf = malloc(CHUNK);
    for (size_t c = 0; c < nweights; c++) {
        CUresult rc = dtoh(buf, weights[c], CHUNK);
        if (rc)
            corrupt("read-error", rc);
        for (size_t o = 0; o < CHUNK; o++)
            if (buf[o] != byte_at(c, o))
                corrupt("weights-chunk", (long)c);
    }
    free(buf);
    printf("weights ok\n");
    fflush(stdout);
}

static void *worker(void *arg)
{
    long id = (long)arg;
    set_current(ctx);
    CUdeviceptr p;
    if (mem_alloc(&p, SCRATCH))
        corrupt("worker-alloc", id);
    unsigned char *buf = malloc(SCRATCH);
    for (unsigned v = (unsigned)id;; v++) {
        CUresult rc = memset8(p, (unsigned char)v, SCRATCH);
        if (rc || (rc = dtoh(buf, p, SCRATCH)))
            corrupt("worker-call", rc);
        for (size_t i = 0; i < SCRATCH; i += 997)
            if (buf[i] != (unsigned char)v)
                corrupt("worker-bytes", id);
        atomic_fetch_add(&ops, 1);
    }
    return NULL;
}

static void *churn(void *arg)
{
    (void)arg;
    set_current(ctx);
    unsigned char buf[4096];
    for (unsigned v = 0;; v++) {
        CUdeviceptr p;
        CUresult rc = mem_alloc(&p, 4u << 20);
        if (rc)
            corrupt("churn-alloc", rc);
        memset(buf, (int)(v & 0xff), sizeof buf);
        if ((rc = htod(p + (1u << 20), buf, sizeof buf)) ||
            (rc = dtoh(buf, p + (1u << 20), sizeof buf)))
            corrupt("churn-call", rc);
        if (buf[100] != (unsigned char)v)
            corrupt("churn-bytes", (long)v);
        if ((rc = mem_free(p)))
            corrupt("churn-free", rc);
        atomic_fetch_add(&ops, 1);
    }
    return NULL;
}

static void on_usr1(int sig)
{
    (void)sig;
    check_asked = 1;
}

int main(int argc, char **argv)
{
    uint64_t linear = 0, vmm = 0, managed = 0;
    int workers = 0, do_churn = 0;
    const char *status = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--linear") && units_parse_size(v, &linear) == 0)
            i++;
        else if (!strcmp(a, "--vmm") && units_parse_size(v, &vmm) == 0)
            i++;
        else if (!strcmp(a, "--managed") && units_parse_size(v, &managed) == 0)
            i++;
        else if (!strcmp(a, "--workers") && (workers = atoi(v)) >= 0 && workers < 64)
            i++;
        else if (!strcmp(a, "--status") && *v)
            status = argv[++i];
        else if (!strcmp(a, "--churn"))
            do_churn = 1;
        else {
            fprintf(stderr, "swapmodel: bad argument '%s'\n", a);
            return 2;
        }
    }
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib || !(*(void **)&gpa = dlsym(lib, "cuGetProcAddress_v2")))
        return 3;
    find("cuInit", &cuInit_);
    find("cuDeviceGet", &cuDeviceGet_);
    find("cuDevicePrimaryCtxRetain", &retain);
    find("cuCtxSetCurrent", &set_current);
    find("cuMemAlloc", &mem_alloc);
    find("cuMemFree", &mem_free);
    find("cuMemAllocManaged", &alloc_managed);
    find("cuMemcpyHtoD", &htod);
    find("cuMemcpyDtoH", &dtoh);
    find("cuMemsetD8", &memset8);
    find("cuMemAddressReserve", &reserve);
    find("cuMemCreate", &create);
    find("cuMemMap", &map);
    find("cuMemSetAccess", &set_access);
    CUdevice dev;
    if (cuInit_(0) || cuDeviceGet_(&dev, 0) || retain(&ctx, dev) || set_current(ctx))
        return 3;
    size_t nl = (linear + CHUNK - 1) / CHUNK, nv = (vmm + CHUNK - 1) / CHUNK;
    weights = calloc(nl + nv + 1, sizeof *weights);
    for (size_t i = 0; i < nl; i++)
        if (mem_alloc(&weights[nweights++], CHUNK))
            corrupt("alloc", (long)i);
    if (nv) { /* one reserved range, one physical allocation per chunk */
        CUdeviceptr base;
        CUmemAllocationProp prop = {.type = 1, .location = {1, dev}};
        CUmemAccessDesc acc = {{1, dev}, 3};
        if (reserve(&base, nv * CHUNK, 0, 0, 0))
            corrupt("reserve", 0);
        for (size_t i = 0; i < nv; i++) {
            CUmemGenericAllocationHandle h;
            if (create(&h, CHUNK, &prop, 0) || map(base + i * CHUNK, CHUNK, 0, h, 0))
                corrupt("vmm", (long)i);
            weights[nweights++] = base + i * CHUNK;
        }
        if (set_access(base, nv * CHUNK, &acc, 1))
            corrupt("access", 0);
    }
    CUdeviceptr m;
    if (managed && alloc_managed(&m, managed, 1))
        corrupt("managed", 0);
    write_weights();
    signal(SIGUSR1, on_usr1);
    pthread_t t;
    for (long i = 0; i < workers; i++)
        pthread_create(&t, NULL, worker, (void *)i);
    if (do_churn)
        pthread_create(&t, NULL, churn, NULL);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    for (;;) {
        if (check_asked) {
            check_asked = 0;
            check_weights();
        }
        if (status) {
            static unsigned long long writes;
            char tmp[512];
            snprintf(tmp, sizeof tmp, "%s.tmp", status);
            FILE *f = fopen(tmp, "w");
            if (f) {
                fprintf(f, "ops %llu\nwrites %llu\n", (unsigned long long)atomic_load(&ops),
                        ++writes);
                fclose(f);
                rename(tmp, status);
            }
        }
        usleep(100000);
    }
}
