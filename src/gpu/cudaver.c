/* cudaver: cuDriverGetVersion by dlopen; it needs no cuInit. */
#include "gpu/cudaver.h"

#include <dlfcn.h>

#include "gpu/cuda_api.h"

int cudaver_read(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!lib)
        return 0;
    CUresult (*get)(int *) = (CUresult(*)(int *))dlsym(lib, "cuDriverGetVersion");
    int v = 0;
    if (!get || get(&v) != 0)
        v = 0;
    return v;
}
