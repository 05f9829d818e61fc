/* hook: how libvramcap gets between a program and the driver.
 *
 * Three doors lead to a driver entry point, and each is watched:
 *   - the dynamic linker (programs linked against libcuda): libvramcap
 *     exports the wrapped functions under their real names;
 *   - dlsym (runtimes that dlopen libcuda): libvramcap exports dlsym, and
 *     when the answer is a real entry point it wraps, returns the wrapper;
 *   - cuGetProcAddress (the CUDA 12/13 runtimes find every entry point
 *     through it, by base name and version): the wrapper asks the driver,
 *     then swaps the answer the same way.
 * The swap goes by the address the driver returned, not by name, so every
 * version suffix (_v2, _ptsz, ...) maps to the wrapper of the variant it
 * really is. Entry points not wrapped are returned untouched: a kernel
 * launch never passes through libvramcap, unless fast swap is on: then
 * every driver entry point handed out (wrapped or not) goes through a
 * gate trampoline (gate.c), so that a suspend can hold the threads. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "shim/gate.h"
#include "shim/hook.h"
#include "shim/shim.h"

#define SHIM_DEFINE(name, params)      CUresult(*real_##name) params;
#define SHIM_DEFINE_NVML(name, params) nvmlReturn_t(*real_##name) params;
SHIM_CUDA_HOOKS(SHIM_DEFINE)
SHIM_CUDA_HELPERS(SHIM_DEFINE)
SHIM_NVML_HOOKS(SHIM_DEFINE_NVML)

/* our wrappers, defined in mem.c and view.c under the real names */
#define SHIM_PROTO(name, params)      CUresult name params;
#define SHIM_PROTO_NVML(name, params) nvmlReturn_t name params;
SHIM_CUDA_HOOKS(SHIM_PROTO)
SHIM_NVML_HOOKS(SHIM_PROTO_NVML)

struct hook {
    const char *name;
    void *wrapper;
    void **real;
};

static const struct hook hooks[] = {
#define SHIM_ENTRY(name, params) {#name, (void *)name, (void **)&real_##name},
    SHIM_CUDA_HOOKS(SHIM_ENTRY) SHIM_NVML_HOOKS(SHIM_ENTRY)
#undef SHIM_ENTRY
};
#define NHOOKS (sizeof hooks / sizeof hooks[0])

typedef void *(*dlsym_fn)(void *, const char *);
static dlsym_fn real_dlsym_ptr;
static atomic_bool cuda_resolved, nvml_resolved;
static pthread_mutex_t resolve_mu = PTHREAD_MUTEX_INITIALIZER;

static dlsym_fn find_real_dlsym(void)
{
    if (!real_dlsym_ptr) {
        /* glibc 2.34 moved dlsym into libc under a new version */
        real_dlsym_ptr = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (!real_dlsym_ptr)
            real_dlsym_ptr = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    }
    return real_dlsym_ptr;
}

void *hook_real_dlsym(void *handle, const char *name)
{
    dlsym_fn f = find_real_dlsym();
    return f ? f(handle, name) : NULL;
}

/* Looks up every real entry point in an already loaded library. */
static void resolve(const char *lib, const char *prefix, atomic_bool *done)
{
    if (atomic_load(done))
        return;
    pthread_mutex_lock(&resolve_mu);
    void *h = atomic_load(done) ? NULL : dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    if (h) {
        for (size_t i = 0; i < NHOOKS; i++)
            if (strncmp(hooks[i].name, prefix, strlen(prefix)) == 0)
                *hooks[i].real = hook_real_dlsym(h, hooks[i].name);
#define SHIM_HELPER(name, params) real_##name = (CUresult(*) params)hook_real_dlsym(h, #name);
        if (prefix[0] == 'c') {
            SHIM_CUDA_HELPERS(SHIM_HELPER)
        }
#undef SHIM_HELPER
        atomic_store(done, true);
        /* the library stays loaded: dlclose would only drop our reference */
        dlclose(h);
    }
    pthread_mutex_unlock(&resolve_mu);
}

void hook_resolve_cuda(void)
{
    resolve("libcuda.so.1", "cu", &cuda_resolved);
}

void hook_resolve_nvml(void)
{
    resolve("libnvidia-ml.so.1", "nvml", &nvml_resolved);
}

void *hook_wrapper_for(const void *real)
{
    if (!real)
        return NULL;
    for (size_t i = 0; i < NHOOKS; i++)
        if (*hooks[i].real == real)
            return hooks[i].wrapper;
    return NULL;
}

/* Whether fn lies in libcuda or in libvramcap (a driver whose own table
 * points at the exported names may hand back our wrappers): only those are
 * gated, not cudart's or cuBLAS's "cu" names. */
static bool in_driver(void *fn)
{
    static void *cuda_base, *own_base;
    Dl_info in;
    if (!cuda_base && real_cuMemAlloc_v2 && dladdr((void *)real_cuMemAlloc_v2, &in))
        cuda_base = in.dli_fbase;
    if (!own_base && dladdr((void *)in_driver, &in))
        own_base = in.dli_fbase;
    return dladdr(fn, &in) && in.dli_fbase &&
           (in.dli_fbase == cuda_base || in.dli_fbase == own_base);
}

/* What a program gets for a driver entry point: our wrapper if we have
 * one, gated when fast swap is on. */
static void *hand_out(void *real)
{
    void *w = hook_wrapper_for(real);
    if (!shim.swap)
        return w ? w : real;
    if (w)
        return gate_wrap(w);
    return in_driver(real) ? gate_wrap(real) : real;
}

static void *swap(void *answer, const char *name)
{
    if (!answer || !name)
        return answer;
    if (name[0] == 'c' && name[1] == 'u') {
        hook_resolve_cuda();
        return hand_out(answer);
    }
    if (strncmp(name, "nvml", 4) == 0) {
        hook_resolve_nvml();
        void *w = hook_wrapper_for(answer);
        return w ? w : answer;
    }
    return answer;
}

/* RTLD_NEXT is relative to the caller: glibc's dlsym finds the caller from
 * its own return address, so that case must reach it by a tail call (this
 * file is built with -O2 and -foptimize-sibling-calls for that). */
SHIM_EXPORT void *dlsym(void *handle, const char *name)
{
    dlsym_fn f = find_real_dlsym();
    if (handle == RTLD_NEXT)
        return f(handle, name);
    return swap(f(handle, name), name);
}

SHIM_EXPORT CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
                                         int *status)
{
    GATE_SCOPE();
    if (!REAL(cuGetProcAddress_v2))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real_cuGetProcAddress_v2(sym, pfn, ver, flags, status);
    if (rc == CUDA_SUCCESS && pfn)
        *pfn = hand_out(*pfn);
    return rc;
}

SHIM_EXPORT CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, cuuint64_t flags)
{
    GATE_SCOPE();
    if (!REAL(cuGetProcAddress))
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult rc = real_cuGetProcAddress(sym, pfn, ver, flags);
    if (rc == CUDA_SUCCESS && pfn)
        *pfn = hand_out(*pfn);
    return rc;
}
