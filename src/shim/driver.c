/* driver: the real entry points (see driver.h): where each is kept, and
 * how they are looked up, past libvramcap, in the loaded libcuda and
 * libnvidia-ml. */
#include "shim/driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#define DRIVER_DEFINE_CU(name, params)   CUresult(*real_##name) params;
#define DRIVER_DEFINE_NVML(name, params) nvmlReturn_t(*real_##name) params;
DRIVER_WRAPPED(DRIVER_DEFINE_CU)
DRIVER_HELPERS(DRIVER_DEFINE_CU)
DRIVER_NVML_WRAPPED(DRIVER_DEFINE_NVML)

struct real {
    const char *name;
    void **at;
};

#define DRIVER_ENTRY(name, params) {#name, (void **)&real_##name},
static const struct real cuda[] = {DRIVER_WRAPPED(DRIVER_ENTRY) DRIVER_HELPERS(DRIVER_ENTRY)};
static const struct real nvml[] = {DRIVER_NVML_WRAPPED(DRIVER_ENTRY)};
#undef DRIVER_ENTRY

static driver_dlsym_fn real_dlsym;
static atomic_bool cuda_resolved, nvml_resolved;
static pthread_mutex_t resolve_mu = PTHREAD_MUTEX_INITIALIZER;

driver_dlsym_fn driver_dlsym(void)
{
    if (!real_dlsym) {
        /* glibc 2.34 moved dlsym into libc under a new version */
        real_dlsym = (driver_dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (!real_dlsym)
            real_dlsym = (driver_dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    }
    return real_dlsym;
}

void *driver_lookup(void *handle, const char *name)
{
    driver_dlsym_fn f = driver_dlsym();
    return f ? f(handle, name) : NULL;
}

/* Looks up every real entry point of the table in an already loaded
 * library. */
static void resolve(const char *lib, const struct real *t, size_t n, atomic_bool *done)
{
    if (atomic_load(done))
        return;
    pthread_mutex_lock(&resolve_mu);
    void *h = atomic_load(done) ? NULL : dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    if (h) {
        for (size_t i = 0; i < n; i++)
            *t[i].at = driver_lookup(h, t[i].name);
        atomic_store(done, true);
        /* the library stays loaded: dlclose would only drop our reference */
        dlclose(h);
    }
    pthread_mutex_unlock(&resolve_mu);
}

void driver_resolve_cuda(void)
{
    resolve("libcuda.so.1", cuda, sizeof cuda / sizeof cuda[0], &cuda_resolved);
}

void driver_resolve_nvml(void)
{
    resolve("libnvidia-ml.so.1", nvml, sizeof nvml / sizeof nvml[0], &nvml_resolved);
}
