/* nvmlso: NVML on Linux: libnvidia-ml.so.1 (the driver's soname), then
 * libnvidia-ml.so, through the dynamic linker's search path. */
#include "gpu/nvmlso.h"

#include <dlfcn.h>
#include <stdio.h>

#include "core/err.h"

static const char *const lib_names[] = {"libnvidia-ml.so.1", "libnvidia-ml.so"};

static void *sym(void *lib, const char *name)
{
    return dlsym(lib, name);
}

static void unload(void *lib)
{
    dlclose(lib);
}

int nvml_open(struct nvml **out, char *err, size_t errlen)
{
    *out = NULL;
    void *lib = NULL;
    char why[256] = "";
    for (size_t i = 0; i < sizeof lib_names / sizeof lib_names[0] && !lib; i++) {
        lib = dlopen(lib_names[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib && i == 0) /* the first failure says why; the fallback's adds nothing */
            snprintf(why, sizeof why, "%s", dlerror());
    }
    if (!lib) {
        snprintf(err, errlen,
                 "cannot load libnvidia-ml.so.1 (%s): no NVIDIA driver here. Install the "
                 "driver",
                 why);
        return VRAM_ENODRIVER;
    }
    return nvml_attach(out, lib, sym, unload, err, errlen);
}
