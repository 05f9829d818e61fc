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
#include "shim/hook.h"

#include <dlfcn.h>
#include <string.h>

#include "shim/gate.h"
#include "shim/mem.h"
#include "shim/mempool.h"
#include "shim/peer.h"
#include "shim/shim.h"
#include "shim/view.h"
#include "shim/vmm.h"

struct hook {
    const char *name;
    void *wrapper;
    void **real;
};

static const struct hook hooks[] = {
#define HOOK_ENTRY(name, params) {#name, (void *)name, (void **)&real_##name},
    DRIVER_WRAPPED(HOOK_ENTRY) DRIVER_NVML_WRAPPED(HOOK_ENTRY)
#undef HOOK_ENTRY
};
#define NHOOKS (sizeof hooks / sizeof hooks[0])

/* Our wrapper for a real entry point, or NULL when we do not wrap it. */
static void *wrapper_for(const void *real)
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
    void *w = wrapper_for(real);
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
        driver_resolve_cuda();
        return hand_out(answer);
    }
    if (strncmp(name, "nvml", 4) == 0) {
        driver_resolve_nvml();
        void *w = wrapper_for(answer);
        return w ? w : answer;
    }
    return answer;
}

/* RTLD_NEXT is relative to the caller: glibc's dlsym finds the caller from
 * its own return address, so that case must reach it by a tail call (this
 * file is built with -O2 and -foptimize-sibling-calls for that). */
SHIM_EXPORT void *dlsym(void *handle, const char *name)
{
    driver_dlsym_fn f = driver_dlsym();
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
