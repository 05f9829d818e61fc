/* slow_nvml: an NVML whose process lists answer late, for bench/gpu_joins.sh
 * (issue 28, item 4): the real libnvidia-ml.so.1 behind it, each
 * nvmlDeviceGetComputeRunningProcesses* call held VRAM_SLOW_NVML_MS first
 * (default 6000), as on a host whose driver answers slowly. The script
 * copies this library under the name libnvidia-ml.so.1 into a folder put
 * first on LD_LIBRARY_PATH of the group under test; VRAM_SLOW_NVML_REAL
 * names the real library. It answers the calls libvramcap makes; any
 * other is not there (a program that needs more must not be run under it). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gpu/nvml_api.h"

#define EXPORT __attribute__((visibility("default")))

static void *real(const char *name)
{
    static void *h;
    if (!h) {
        const char *path = getenv("VRAM_SLOW_NVML_REAL");
        h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
        if (!h) {
            fprintf(stderr, "slow_nvml: VRAM_SLOW_NVML_REAL=%s: %s\n", path ? path : "(unset)",
                    dlerror());
            return NULL;
        }
    }
    return dlsym(h, name);
}

static void late(void)
{
    const char *v = getenv("VRAM_SLOW_NVML_MS");
    long ms = v ? strtol(v, NULL, 10) : 6000;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (ms > 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

#define PASS(ret, fallback, name, params, args)                                                    \
    EXPORT ret name params                                                                         \
    {                                                                                              \
        ret(*f) params = (ret(*) params)real(#name);                                               \
        return f ? f args : fallback;                                                              \
    }

#define SLOW(name)                                                                                 \
    EXPORT nvmlReturn_t name(nvmlDevice_t d, unsigned *n, void *buf)                               \
    {                                                                                              \
        late();                                                                                    \
        nvmlReturn_t (*f)(nvmlDevice_t, unsigned *, void *) =                                      \
            (nvmlReturn_t(*)(nvmlDevice_t, unsigned *, void *))real(#name);                        \
        return f ? f(d, n, buf) : NVML_ERROR_FUNCTION_NOT_FOUND;                                   \
    }

PASS(nvmlReturn_t, NVML_ERROR_DRIVER_NOT_LOADED, nvmlInit_v2, (void), ())
PASS(nvmlReturn_t, NVML_ERROR_DRIVER_NOT_LOADED, nvmlInit, (void), ())
PASS(nvmlReturn_t, NVML_ERROR_UNINITIALIZED, nvmlShutdown, (void), ())
PASS(const char *, "Unknown Error", nvmlErrorString, (nvmlReturn_t r), (r))
PASS(nvmlReturn_t, NVML_ERROR_FUNCTION_NOT_FOUND, nvmlDeviceGetHandleByUUID,
     (const char *u, nvmlDevice_t *d), (u, d))
PASS(nvmlReturn_t, NVML_ERROR_FUNCTION_NOT_FOUND, nvmlDeviceGetHandleByIndex_v2,
     (unsigned i, nvmlDevice_t *d), (i, d))
PASS(nvmlReturn_t, NVML_ERROR_FUNCTION_NOT_FOUND, nvmlDeviceGetCount_v2, (unsigned *n), (n))
PASS(nvmlReturn_t, NVML_ERROR_FUNCTION_NOT_FOUND, nvmlDeviceGetUUID,
     (nvmlDevice_t d, char *u, unsigned len), (d, u, len))
PASS(nvmlReturn_t, NVML_ERROR_FUNCTION_NOT_FOUND, nvmlDeviceGetMemoryInfo,
     (nvmlDevice_t d, nvmlMemory_v1_t *m), (d, m))
PASS(nvmlReturn_t, NVML_ERROR_FUNCTION_NOT_FOUND, nvmlDeviceGetMemoryInfo_v2,
     (nvmlDevice_t d, nvmlMemory_v2_t *m), (d, m))
SLOW(nvmlDeviceGetComputeRunningProcesses_v3)
SLOW(nvmlDeviceGetComputeRunningProcesses_v2)
SLOW(nvmlDeviceGetComputeRunningProcesses)
