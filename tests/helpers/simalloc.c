/* simalloc: a stand-in for a GPU job in tests. It loads libcuda.so.1 the way
 * frameworks do (dlopen, then either dlsym or cuGetProcAddress), allocates
 * what it is told, writes and checks a pattern, says "ready PID" and waits
 * until stdin closes (or, with --hold, until it is killed). With --busy a
 * thread keeps copying to the GPU, so the driver sees it working. Against
 * the simulated driver it shows up in `vram status` like any CUDA process.
 * With --devices N it does the same on each of the first N visible devices
 * (a process over several GPUs), then tries --then SIZE more on each, and
 * says what each device reports: "dev D ok|oom RC", "dev D then ok|oom
 * RC", "dev D free F total T devtotal X nvml N". With --vmm those
 * allocations are cuMemCreate's, each naming its device in its properties
 * while device 0's context stays current (as a process that places memory
 * on all its GPUs from one thread does). With --refree SIZE, SIZE more on
 * each device is freed from device 0's context and taken again: "dev D
 * refree ok|oom RC" (a free gives back to the device it was taken on).
 * With --reuse, the first allocation is freed once written and one of
 * the same size taken: "reuse same|moved old|fresh" (whether it came back
 * at the same address, and whether it still held the bytes written). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/units.h"
#include "gpu/cuda_api.h"

typedef CUresult (*init_fn)(unsigned);
typedef CUresult (*get_fn)(CUdevice *, int);
typedef CUresult (*retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*setcur_fn)(CUcontext);
typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);
typedef CUresult (*dtoh_fn)(void *, CUdeviceptr, size_t);
typedef CUresult (*info_fn)(size_t *, size_t *);
typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*devtotal_fn)(size_t *, CUdevice);
typedef CUresult (*uuid_fn)(CUuuid *, CUdevice);
typedef CUresult (*create_fn)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                              unsigned long long);

#define MAX_DEVICES 16

static void *lib;
static gpa_fn gpa;

static void *sym(const char *base, const char *versioned)
{
    void *p = NULL;
    if (gpa) {
        if (gpa(base, &p, 13000, 0) != CUDA_SUCCESS)
            p = NULL;
    } else {
        p = dlsym(lib, versioned);
    }
    if (!p) {
        fprintf(stderr, "simalloc: no %s\n", versioned);
        exit(1);
    }
    return p;
}

static struct {
    setcur_fn setcur;
    htod_fn htod;
    CUcontext ctx;
    CUdeviceptr where;
} work;

static void *worker(void *arg)
{
    (void)arg;
    unsigned char b[64] = {0};
    work.setcur(work.ctx);
    for (;;) {
        work.htod(work.where, b, sizeof b);
        usleep(200 * 1000);
    }
    return NULL;
}

static void *sleeper(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

/* NVML's total for the GPU with this CUDA device's UUID (NVML numbers
 * every GPU of the machine, whatever CUDA_VISIBLE_DEVICES shows). */
static unsigned long long nvml_total_of(const CUuuid *u)
{
    void *nv = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!nv)
        return 0;
    int (*init)(void) = (int (*)(void))dlsym(nv, "nvmlInit_v2");
    int (*by_uuid)(const char *, void **) =
        (int (*)(const char *, void **))dlsym(nv, "nvmlDeviceGetHandleByUUID");
    int (*meminfo)(void *, unsigned long long *) =
        (int (*)(void *, unsigned long long *))dlsym(nv, "nvmlDeviceGetMemoryInfo");
    const unsigned char *b = (const unsigned char *)u->bytes;
    char uuid[96];
    snprintf(uuid, sizeof uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
             b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
             b[15]);
    void *d;
    unsigned long long m[3] = {0}; /* total, free, used */
    if (!init || !by_uuid || !meminfo || init() || by_uuid(uuid, &d) || meminfo(d, m))
        return 0;
    return m[0];
}

/* --devices N: allocations on each of N devices in turn, then --then more
 * on each, then what each device says of its memory. */
static create_fn cuMemCreate;
static setcur_fn setcur_of_vmm;
static CUcontext vmm_ctx;

/* bytes on device d: cuMemAlloc in d's context, or with --vmm cuMemCreate
 * for location d from device 0's context */
static CUresult take_on(int d, alloc_fn cuMemAlloc, uint64_t bytes)
{
    if (!cuMemCreate) {
        CUdeviceptr p;
        return cuMemAlloc(&p, bytes);
    }
    CUmemGenericAllocationHandle h;
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = 1;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = d;
    setcur_of_vmm(vmm_ctx);
    return cuMemCreate(&h, (bytes + (2 << 20) - 1) & ~(uint64_t)((2 << 20) - 1), &prop, 0);
}

static int devices_mode(int ndev, uint64_t bytes, int count, uint64_t then, int hold, int vmm,
                        uint64_t refree)
{
    CUresult (*cuMemFree)(CUdeviceptr) = (CUresult(*)(CUdeviceptr))sym("cuMemFree", "cuMemFree_v2");
    CUresult (*cuInit)(unsigned) = (init_fn)sym("cuInit", "cuInit");
    get_fn cuDeviceGet = (get_fn)sym("cuDeviceGet", "cuDeviceGet");
    retain_fn retain = (retain_fn)sym("cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain");
    setcur_fn setcur = (setcur_fn)sym("cuCtxSetCurrent", "cuCtxSetCurrent");
    alloc_fn cuMemAlloc = (alloc_fn)sym("cuMemAlloc", "cuMemAlloc_v2");
    info_fn cuMemGetInfo = (info_fn)sym("cuMemGetInfo", "cuMemGetInfo_v2");
    devtotal_fn total_mem = (devtotal_fn)sym("cuDeviceTotalMem", "cuDeviceTotalMem_v2");
    uuid_fn get_uuid = (uuid_fn)sym("cuDeviceGetUuid", "cuDeviceGetUuid_v2");
    CUcontext ctx[MAX_DEVICES];
    CUresult rc;
    if (ndev > MAX_DEVICES || (rc = cuInit(0))) {
        fprintf(stderr, "simalloc: CUDA setup failed\n");
        return 1;
    }
    for (int d = 0; d < ndev; d++) {
        CUdevice dev;
        if ((rc = cuDeviceGet(&dev, d)) || (rc = retain(&ctx[d], dev)) || (rc = setcur(ctx[d]))) {
            printf("dev %d setup %d\n", d, rc);
            ctx[d] = NULL;
            continue;
        }
    }
    if (vmm) {
        cuMemCreate = (create_fn)sym("cuMemCreate", "cuMemCreate");
        setcur_of_vmm = setcur;
        vmm_ctx = ctx[0];
    }
    for (int d = 0; d < ndev; d++)
        for (int k = 0; k < count && bytes && ctx[d] && !setcur(ctx[d]); k++) {
            rc = take_on(d, cuMemAlloc, bytes);
            printf(rc ? "dev %d oom %d\n" : "dev %d ok\n", d, rc);
        }
    for (int d = 0; d < ndev && then; d++) {
        if (!ctx[d] || setcur(ctx[d]))
            continue;
        rc = take_on(d, cuMemAlloc, then);
        printf(rc ? "dev %d then oom %d\n" : "dev %d then ok\n", d, rc);
    }
    for (int d = 0; d < ndev && refree; d++) {
        CUdeviceptr p;
        if (!ctx[d] || setcur(ctx[d]) || cuMemAlloc(&p, refree) || setcur(ctx[0]) || cuMemFree(p) ||
            setcur(ctx[d])) {
            printf("dev %d refree setup failed\n", d);
            continue;
        }
        rc = cuMemAlloc(&p, refree);
        printf(rc ? "dev %d refree oom %d\n" : "dev %d refree ok\n", d, rc);
    }
    for (int d = 0; d < ndev; d++) {
        size_t fb = 0, tb = 0, dt = 0;
        CUuuid u;
        if (!ctx[d] || setcur(ctx[d]) || cuMemGetInfo(&fb, &tb) || total_mem(&dt, d) ||
            get_uuid(&u, d))
            continue;
        printf("dev %d free %zu total %zu devtotal %zu nvml %llu\n", d, fb, tb, dt,
               nvml_total_of(&u));
    }
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    if (hold)
        for (;;)
            pause();
    char c;
    while (read(STDIN_FILENO, &c, 1) > 0)
        ;
    return 0;
}

int main(int argc, char **argv)
{
    int gpu = 0;
    uint64_t bytes = 0;
    int count = 1;
    int hold = 0, zombie = 0, busy = 0, ndev = 0, vmm = 0, reuse = 0;
    uint64_t then = 0, refree = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--gpu") && i + 1 < argc)
            gpu = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--bytes") && i + 1 < argc) {
            if (units_parse_size(argv[++i], &bytes) < 0) {
                fprintf(stderr, "simalloc: bad size %s\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--count") && i + 1 < argc)
            count = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--hold"))
            hold = 1;
        else if (!strcmp(argv[i], "--zombie"))
            zombie = 1;
        else if (!strcmp(argv[i], "--busy"))
            busy = 1;
        else if (!strcmp(argv[i], "--vmm"))
            vmm = 1;
        else if (!strcmp(argv[i], "--devices") && i + 1 < argc)
            ndev = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--then") && i + 1 < argc) {
            if (units_parse_size(argv[++i], &then) < 0) {
                fprintf(stderr, "simalloc: bad size %s\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--refree") && i + 1 < argc) {
            if (units_parse_size(argv[++i], &refree) < 0) {
                fprintf(stderr, "simalloc: bad size %s\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--reuse"))
            reuse = 1;
        else if (!strcmp(argv[i], "--proc-address"))
            gpa = (gpa_fn)1; /* resolved below */
        else {
            fprintf(stderr,
                    "usage: simalloc [--gpu N | --devices N [--then SIZE] [--vmm] [--refree SIZE]] "
                    "[--bytes SIZE] "
                    "[--count N] [--proc-address] [--hold] [--zombie] [--busy] [--reuse]\n");
            return 2;
        }
    }
    lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "simalloc: %s\n", dlerror());
        return 1;
    }
    if (gpa)
        gpa = (gpa_fn)dlsym(lib, "cuGetProcAddress");
    if (ndev > 0)
        return devices_mode(ndev, bytes, count, then, hold, vmm, refree);
    init_fn cuInit = (init_fn)sym("cuInit", "cuInit");
    get_fn cuDeviceGet = (get_fn)sym("cuDeviceGet", "cuDeviceGet");
    /* the primary context, as the CUDA runtime makes it */
    retain_fn retain = (retain_fn)sym("cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain");
    setcur_fn setcur = (setcur_fn)sym("cuCtxSetCurrent", "cuCtxSetCurrent");
    alloc_fn cuMemAlloc = (alloc_fn)sym("cuMemAlloc", "cuMemAlloc_v2");
    htod_fn htod = (htod_fn)sym("cuMemcpyHtoD", "cuMemcpyHtoD_v2");
    dtoh_fn dtoh = (dtoh_fn)sym("cuMemcpyDtoH", "cuMemcpyDtoH_v2");
    info_fn cuMemGetInfo = (info_fn)sym("cuMemGetInfo", "cuMemGetInfo_v2");

    CUdevice dev;
    CUcontext ctx;
    CUresult rc;
    if ((rc = cuInit(0)) || (rc = cuDeviceGet(&dev, gpu)) || (rc = retain(&ctx, dev)) ||
        (rc = setcur(ctx))) {
        fprintf(stderr, "simalloc: CUDA setup failed: %d\n", rc);
        return 1;
    }
    for (int k = 0; k < count && bytes; k++) {
        CUdeviceptr p;
        if ((rc = cuMemAlloc(&p, bytes))) {
            printf("oom %d\n", rc);
            fflush(stdout);
            return 3;
        }
        /* a pattern at both ends proves the memory is real and separate */
        unsigned char in[4096], out[4096];
        size_t n = bytes < sizeof in ? bytes : sizeof in;
        for (size_t i = 0; i < n; i++)
            in[i] = (unsigned char)(i * 31 + (size_t)k);
        if (htod(p, in, n) || dtoh(out, p, n) || memcmp(in, out, n)) {
            fprintf(stderr, "simalloc: data did not come back\n");
            return 1;
        }
        if (k == 0)
            work.where = p;
        if (k == 0 && reuse) {
            CUresult (*cuMemFree)(CUdeviceptr) =
                (CUresult(*)(CUdeviceptr))sym("cuMemFree", "cuMemFree_v2");
            CUdeviceptr q;
            if ((rc = cuMemFree(p)) || (rc = cuMemAlloc(&q, bytes)) || (rc = dtoh(out, q, n))) {
                fprintf(stderr, "simalloc: --reuse: %d\n", rc);
                return 1;
            }
            printf("reuse %s %s\n", q == p ? "same" : "moved", memcmp(in, out, n) ? "fresh" : "old");
            work.where = q;
        }
    }
    if (busy && !work.where) {
        fprintf(stderr, "simalloc: --busy needs --bytes\n");
        return 2;
    }
    if (busy) {
        pthread_t t;
        work.setcur = setcur;
        work.htod = htod;
        work.ctx = ctx;
        pthread_create(&t, NULL, worker, NULL);
    }
    size_t fb, tb;
    cuMemGetInfo(&fb, &tb);
    /* and NVML, asked from inside the process as frameworks do */
    unsigned long long nvml_total = 0;
    void *nv = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (nv) {
        int (*init)(void) = (int (*)(void))dlsym(nv, "nvmlInit_v2");
        int (*handle)(unsigned, void **) =
            (int (*)(unsigned, void **))dlsym(nv, "nvmlDeviceGetHandleByIndex_v2");
        int (*meminfo)(void *, unsigned long long *) =
            (int (*)(void *, unsigned long long *))dlsym(nv, "nvmlDeviceGetMemoryInfo");
        void *d;
        unsigned long long m[3]; /* total, free, used */
        if (init && handle && meminfo && !init() && !handle((unsigned)gpu, &d) && !meminfo(d, m))
            nvml_total = m[0];
    }
    printf("ready %d free %zu total %zu nvml %llu\n", (int)getpid(), fb, tb, nvml_total);
    fflush(stdout);
    if (zombie) {
        /* the main thread exits, a worker lives on: the process shows as
         * defunct (Z) and still holds its GPU memory */
        pthread_t t;
        pthread_create(&t, NULL, sleeper, NULL);
        pthread_exit(NULL);
    }
    if (hold)
        for (;;)
            pause();
    char c;
    while (read(STDIN_FILENO, &c, 1) > 0)
        ;
    return 0;
}
