/* nvml_timer: an NVML that writes down how long each call of a program
 * took, for bench/status_calls.sh: where `vram status`'s time goes on the
 * real driver, call by call, in the order vram makes them.
 *
 * The script copies this library under the name libnvidia-ml.so.1 into a
 * folder put first on LD_LIBRARY_PATH; VRAM_NVML_TIMER_REAL names the real
 * library, VRAM_NVML_TIMER_LOG the file each call appends one line to:
 * "START_NS END_NS TID NAME RC", CLOCK_MONOTONIC. It answers the calls of
 * gpu/nvml_api.h's table only, which is every call vram makes.
 *
 * Each entry point forwards six integer registers whatever its real
 * arguments: every NVML call vram makes takes at most four, all integers
 * or pointers, and on x86-64 and AArch64 a callee ignores registers it
 * does not read. The return value is passed through in the same way
 * (nvmlErrorString's pointer included). */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gpu/nvml_api.h"

#define EXPORT __attribute__((visibility("default")))

typedef long (*any_fn)(long, long, long, long, long, long);

static void *lib;
static int log_fd = -1;

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One write a line: lines of threads that call at once stay whole. */
static void note(const char *name, long long t0, long long t1, long rc)
{
    if (log_fd < 0)
        return;
    char line[160];
    int n = snprintf(line, sizeof line, "%lld %lld %ld %s %ld\n", t0, t1, (long)syscall(SYS_gettid),
                     name, rc);
    if (n > 0 && n < (int)sizeof line && write(log_fd, line, (size_t)n) < 0)
        log_fd = -1;
}

__attribute__((constructor)) static void timer_open(void)
{
    long long t0 = now_ns();
    const char *path = getenv("VRAM_NVML_TIMER_REAL");
    lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!lib)
        fprintf(stderr, "nvml_timer: VRAM_NVML_TIMER_REAL=%s: %s\n", path ? path : "(unset)",
                dlerror());
    const char *log = getenv("VRAM_NVML_TIMER_LOG");
    if (log)
        log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    note("dlopen(real)", t0, now_ns(), lib != NULL);
}

#define TIMED(name, ret, params)                                                                   \
    EXPORT long name(long a, long b, long c, long d, long e, long f)                               \
    {                                                                                              \
        static any_fn fn;                                                                          \
        if (!fn && lib)                                                                            \
            fn = (any_fn)dlsym(lib, #name);                                                        \
        if (!fn)                                                                                   \
            return NVML_ERROR_FUNCTION_NOT_FOUND;                                                  \
        long long t0 = now_ns();                                                                   \
        long rc = fn(a, b, c, d, e, f);                                                            \
        note(#name, t0, now_ns(), strcmp(#name, "nvmlErrorString") ? (int)rc : 0);                 \
        return rc;                                                                                 \
    }

NVML_FUNCS(TIMED)
