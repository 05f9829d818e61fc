/* poolmodel: a CUDA program driven line by line on stdin, for the tests of
 * fast swap with stream-ordered pools, graphs and IPC. It finds the driver
 * as the CUDA runtime does (dlopen, then every entry point through
 * cuGetProcAddress), makes a context on device 0 and two streams, and
 * answers each command with one line on stdout ("ERR NAME RC" on a failed
 * call). Buffers have names (one word); STREAM is 0 (the legacy stream),
 * 1 or 2; POOL is default, current or user (the one mkpool made).
 *   alloc NAME SIZE POOL STREAM   cuMemAllocFromPoolAsync -> "addr NAME 0x..."
 *   aalloc NAME SIZE STREAM       cuMemAllocAsync (the stream's device's current
 *                                 pool, as cudaMallocAsync and PyTorch's
 *                                 backend:cudaMallocAsync ask)
 *   free NAME STREAM              cuMemFreeAsync -> "ok"
 *   fill NAME SEED | check NAME SEED   a pattern written / compared over the
 *                                 whole buffer -> "ok" | "CORRUPT NAME OFFSET"
 *   memset NAME BYTE STREAM       cuMemsetD8Async (captured while capturing)
 *   copy DST SRC STREAM           cuMemcpyDtoDAsync of SRC's size
 *   sync | ssync STREAM           cuCtxSynchronize | cuStreamSynchronize
 *   mkpool | setcur POOL | threshold POOL BYTES | trim POOL KEEP
 *   stats POOL                    "stats reserved R used U"
 *   capture                       stream 1 begins capturing (global mode)
 *   endcapture [autofree]         ends it and instantiates the graph
 *   launch                        launches it on stream 1 and waits
 *   gmem                          "gmem used U reserved R" (device 0)
 *   export NAME                   cuIpcGetMemHandle -> "handle HEX"
 *   import NAME SIZE HEX          cuIpcOpenMemHandle -> "addr NAME 0x..."
 *   close NAME                    cuIpcCloseMemHandle
 *   legacy NAME SIZE              cuMemAlloc -> "addr NAME 0x..."
 * Prints "ready PID" once set up; ends at "quit" or end of input. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/units.h"
#include "gpu/cuda_api.h"

#define MAX_BUFS 64
#define PIECE    (1u << 20)

static CUresult (*gpa)(const char *, void **, int, cuuint64_t, int *);
static CUresult (*init_)(unsigned);
static CUresult (*device_get)(CUdevice *, int);
static CUresult (*retain)(CUcontext *, CUdevice);
static CUresult (*set_current)(CUcontext);
static CUresult (*stream_create)(CUstream *, unsigned);
static CUresult (*alloc_pool)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
static CUresult (*alloc_async)(CUdeviceptr *, size_t, CUstream);
static CUresult (*free_async)(CUdeviceptr, CUstream);
static CUresult (*htod)(CUdeviceptr, const void *, size_t);
static CUresult (*dtoh)(void *, CUdeviceptr, size_t);
static CUresult (*memset_async)(CUdeviceptr, unsigned char, size_t, CUstream);
static CUresult (*copy_async)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
static CUresult (*ctx_sync)(void);
static CUresult (*stream_sync)(CUstream);
static CUresult (*pool_create)(CUmemoryPool *, const CUmemPoolProps *);
static CUresult (*default_pool)(CUmemoryPool *, CUdevice);
static CUresult (*get_pool)(CUmemoryPool *, CUdevice);
static CUresult (*set_pool)(CUdevice, CUmemoryPool);
static CUresult (*pool_set)(CUmemoryPool, int, void *);
static CUresult (*pool_get)(CUmemoryPool, int, void *);
static CUresult (*pool_trim)(CUmemoryPool, size_t);
static CUresult (*begin_capture)(CUstream, CUstreamCaptureMode);
static CUresult (*end_capture)(CUstream, CUgraph *);
static CUresult (*instantiate)(CUgraphExec *, CUgraph, unsigned long long);
static CUresult (*launch)(CUgraphExec, CUstream);
static CUresult (*graph_attr)(CUdevice, int, void *);
static CUresult (*ipc_get)(CUipcMemHandle *, CUdeviceptr);
static CUresult (*ipc_open)(CUdeviceptr *, CUipcMemHandle, unsigned);
static CUresult (*ipc_close)(CUdeviceptr);
static CUresult (*mem_alloc)(CUdeviceptr *, size_t);

static struct {
    char name[32];
    CUdeviceptr p;
    size_t size;
} bufs[MAX_BUFS];
static CUstream streams[3];
static CUmemoryPool user_pool;
static CUgraphExec exec;

static void find(const char *name, void *fn)
{
    if (gpa(name, (void **)fn, 12000, 0, NULL) != CUDA_SUCCESS || !*(void **)fn) {
        fprintf(stderr, "poolmodel: no %s\n", name);
        exit(3);
    }
}

static int slot(const char *name, int make)
{
    int free_at = -1;
    for (int i = 0; i < MAX_BUFS; i++) {
        if (bufs[i].name[0] && strcmp(bufs[i].name, name) == 0)
            return i;
        if (!bufs[i].name[0] && free_at < 0)
            free_at = i;
    }
    if (!make || free_at < 0)
        return -1;
    snprintf(bufs[free_at].name, sizeof bufs[free_at].name, "%s", name);
    return free_at;
}

static CUstream stream_of(const char *s)
{
    int i = s ? atoi(s) : 0;
    return i >= 0 && i < 3 ? streams[i] : NULL;
}

static CUmemoryPool pool_of(const char *s)
{
    CUmemoryPool p = NULL;
    if (s && strcmp(s, "user") == 0)
        return user_pool;
    if (s && strcmp(s, "current") == 0)
        get_pool(&p, 0);
    else
        default_pool(&p, 0);
    return p;
}

static unsigned char pattern(unsigned seed, size_t i)
{
    return (unsigned char)(seed * 131 + i * 7 + (i >> 12));
}

/* Writes (or, with check, compares) the pattern over the buffer. */
static void pattern_io(int b, unsigned seed, int check)
{
    static unsigned char buf[PIECE];
    for (size_t off = 0; off < bufs[b].size; off += PIECE) {
        size_t n = bufs[b].size - off < PIECE ? bufs[b].size - off : PIECE;
        CUresult rc;
        if (!check) {
            for (size_t i = 0; i < n; i++)
                buf[i] = pattern(seed, off + i);
            if ((rc = htod(bufs[b].p + off, buf, n))) {
                printf("ERR htod %d\n", rc);
                return;
            }
            continue;
        }
        if ((rc = dtoh(buf, bufs[b].p + off, n))) {
            printf("ERR dtoh %d\n", rc);
            return;
        }
        for (size_t i = 0; i < n; i++)
            if (buf[i] != pattern(seed, off + i)) {
                printf("CORRUPT %s %zu\n", bufs[b].name, off + i);
                return;
            }
    }
    printf("ok\n");
}

static void answer(CUresult rc, const char *what)
{
    if (rc)
        printf("ERR %s %d\n", what, rc);
    else
        printf("ok\n");
}

static void command(char *line)
{
    char *argv[8] = {0};
    int argc = 0;
    for (char *t = strtok(line, " \t\n"); t && argc < 8; t = strtok(NULL, " \t\n"))
        argv[argc++] = t;
    if (!argc)
        return;
    const char *c = argv[0];
    uint64_t size = 0;
    int b = argc > 1
                ? slot(argv[1], !strcmp(c, "alloc") || !strcmp(c, "aalloc") || !strcmp(c, "import") ||
                                   !strcmp(c, "legacy"))
                : -1;
    CUresult rc = 0;
    if (!strcmp(c, "alloc") && b >= 0 && argc == 5 && units_parse_size(argv[2], &size) == 0) {
        rc = alloc_pool(&bufs[b].p, size, pool_of(argv[3]), stream_of(argv[4]));
        bufs[b].size = size;
        if (rc)
            printf("ERR alloc %d\n", rc);
        else
            printf("addr %s 0x%llx\n", argv[1], (unsigned long long)bufs[b].p);
    } else if (!strcmp(c, "aalloc") && b >= 0 && argc == 4 &&
               units_parse_size(argv[2], &size) == 0) {
        rc = alloc_async(&bufs[b].p, size, stream_of(argv[3]));
        bufs[b].size = size;
        if (rc)
            printf("ERR aalloc %d\n", rc);
        else
            printf("addr %s 0x%llx\n", argv[1], (unsigned long long)bufs[b].p);
    } else if (!strcmp(c, "legacy") && b >= 0 && argc == 3 &&
               units_parse_size(argv[2], &size) == 0) {
        rc = mem_alloc(&bufs[b].p, size);
        bufs[b].size = size;
        if (rc)
            printf("ERR legacy %d\n", rc);
        else
            printf("addr %s 0x%llx\n", argv[1], (unsigned long long)bufs[b].p);
    } else if (!strcmp(c, "free") && b >= 0) {
        answer(free_async(bufs[b].p, stream_of(argv[2])), "free");
        bufs[b].name[0] = 0;
    } else if ((!strcmp(c, "fill") || !strcmp(c, "check")) && b >= 0 && argc == 3) {
        pattern_io(b, (unsigned)atoi(argv[2]), c[0] == 'c');
    } else if (!strcmp(c, "memset") && b >= 0 && argc == 4) {
        answer(
            memset_async(bufs[b].p, (unsigned char)atoi(argv[2]), bufs[b].size, stream_of(argv[3])),
            "memset");
    } else if (!strcmp(c, "copy") && b >= 0 && argc == 4) {
        int s = slot(argv[2], 0);
        answer(s < 0 ? CUDA_ERROR_INVALID_VALUE
                     : copy_async(bufs[b].p, bufs[s].p, bufs[s].size, stream_of(argv[3])),
               "copy");
    } else if (!strcmp(c, "sync")) {
        answer(ctx_sync(), "sync");
    } else if (!strcmp(c, "ssync")) {
        answer(stream_sync(stream_of(argv[1])), "ssync");
    } else if (!strcmp(c, "mkpool")) {
        CUmemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = 1;
        props.location = (CUmemLocation){CU_MEM_LOCATION_TYPE_DEVICE, 0};
        answer(pool_create(&user_pool, &props), "mkpool");
    } else if (!strcmp(c, "setcur") && argc == 2) {
        answer(set_pool(0, pool_of(argv[1])), "setcur");
    } else if (!strcmp(c, "threshold") && argc == 3 && units_parse_size(argv[2], &size) == 0) {
        answer(pool_set(pool_of(argv[1]), CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &size), "threshold");
    } else if (!strcmp(c, "trim") && argc == 3 && units_parse_size(argv[2], &size) == 0) {
        answer(pool_trim(pool_of(argv[1]), size), "trim");
    } else if (!strcmp(c, "stats") && argc == 2) {
        uint64_t r = 0, u = 0;
        CUmemoryPool p = pool_of(argv[1]);
        if ((rc = pool_get(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &r)) ||
            (rc = pool_get(p, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &u)))
            printf("ERR stats %d\n", rc);
        else
            printf("stats reserved %llu used %llu\n", (unsigned long long)r, (unsigned long long)u);
    } else if (!strcmp(c, "capture")) {
        answer(begin_capture(streams[1], CU_STREAM_CAPTURE_MODE_GLOBAL), "capture");
    } else if (!strcmp(c, "endcapture")) {
        CUgraph g;
        if (!(rc = end_capture(streams[1], &g)))
            rc = instantiate(&exec, g,
                             argc > 1 && !strcmp(argv[1], "autofree")
                                 ? CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH
                                 : 0);
        answer(rc, "endcapture");
    } else if (!strcmp(c, "launch")) {
        if (!(rc = launch(exec, streams[1])))
            rc = stream_sync(streams[1]);
        answer(rc, "launch");
    } else if (!strcmp(c, "gmem")) {
        uint64_t u = 0, r = 0;
        if ((rc = graph_attr(0, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &u)) ||
            (rc = graph_attr(0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &r)))
            printf("ERR gmem %d\n", rc);
        else
            printf("gmem used %llu reserved %llu\n", (unsigned long long)u, (unsigned long long)r);
    } else if (!strcmp(c, "export") && b >= 0) {
        CUipcMemHandle h;
        if ((rc = ipc_get(&h, bufs[b].p))) {
            printf("ERR export %d\n", rc);
        } else {
            printf("handle ");
            for (size_t i = 0; i < sizeof h.reserved; i++)
                printf("%02x", (unsigned char)h.reserved[i]);
            printf("\n");
        }
    } else if (!strcmp(c, "import") && b >= 0 && argc == 4 &&
               units_parse_size(argv[2], &size) == 0 && strlen(argv[3]) == 128) {
        CUipcMemHandle h;
        for (size_t i = 0; i < sizeof h.reserved; i++) {
            unsigned v;
            sscanf(argv[3] + 2 * i, "%2x", &v);
            h.reserved[i] = (char)v;
        }
        bufs[b].size = size;
        if ((rc = ipc_open(&bufs[b].p, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)))
            printf("ERR import %d\n", rc);
        else
            printf("addr %s 0x%llx\n", argv[1], (unsigned long long)bufs[b].p);
    } else if (!strcmp(c, "close") && b >= 0) {
        answer(ipc_close(bufs[b].p), "close");
        bufs[b].name[0] = 0;
    } else {
        printf("ERR usage %s\n", c);
    }
}

int main(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib || !(*(void **)&gpa = dlsym(lib, "cuGetProcAddress_v2")))
        return 3;
    find("cuInit", &init_);
    find("cuDeviceGet", &device_get);
    find("cuDevicePrimaryCtxRetain", &retain);
    find("cuCtxSetCurrent", &set_current);
    find("cuStreamCreate", &stream_create);
    find("cuMemAllocFromPoolAsync", &alloc_pool);
    find("cuMemAllocAsync", &alloc_async);
    find("cuMemFreeAsync", &free_async);
    find("cuMemcpyHtoD", &htod);
    find("cuMemcpyDtoH", &dtoh);
    find("cuMemsetD8Async", &memset_async);
    find("cuMemcpyDtoDAsync", &copy_async);
    find("cuCtxSynchronize", &ctx_sync);
    find("cuStreamSynchronize", &stream_sync);
    find("cuMemPoolCreate", &pool_create);
    find("cuDeviceGetDefaultMemPool", &default_pool);
    find("cuDeviceGetMemPool", &get_pool);
    find("cuDeviceSetMemPool", &set_pool);
    find("cuMemPoolSetAttribute", &pool_set);
    find("cuMemPoolGetAttribute", &pool_get);
    find("cuMemPoolTrimTo", &pool_trim);
    find("cuStreamBeginCapture", &begin_capture);
    find("cuStreamEndCapture", &end_capture);
    find("cuGraphInstantiate", &instantiate);
    find("cuGraphLaunch", &launch);
    find("cuDeviceGetGraphMemAttribute", &graph_attr);
    find("cuIpcGetMemHandle", &ipc_get);
    find("cuIpcOpenMemHandle", &ipc_open);
    find("cuIpcCloseMemHandle", &ipc_close);
    find("cuMemAlloc", &mem_alloc);
    CUdevice dev;
    CUcontext ctx;
    if (init_(0) || device_get(&dev, 0) || retain(&ctx, dev) || set_current(ctx) ||
        stream_create(&streams[1], 1) || stream_create(&streams[2], 1))
        return 3;
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    char line[512];
    while (fgets(line, sizeof line, stdin) && strncmp(line, "quit", 4) != 0) {
        command(line);
        fflush(stdout);
    }
    return 0;
}
