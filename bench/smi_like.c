/* smi_like: what `nvidia-smi --query-gpu=memory.used,memory.total
 * --format=csv` asks of NVML, and nothing else: load it, start it, each
 * GPU's handle and memory, a CSV line each, shut it down. The floor of any
 * NVML tool, for bench/status_vs_smi.sh where nvidia-smi is not (the
 * simulated driver). */
#include <dlfcn.h>
#include <stdio.h>

#include "gpu/nvml_api.h"

int main(void)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "smi_like: %s\n", dlerror());
        return 3;
    }
#define X(name, ret, args) __attribute__((unused)) ret(*name) args = (ret(*) args)dlsym(lib, #name);
    NVML_FUNCS(X)
#undef X
    if (!nvmlInit_v2 || nvmlInit_v2() != NVML_SUCCESS)
        return 3;
    unsigned n = 0;
    nvmlDeviceGetCount_v2(&n);
    printf("memory.used [MiB], memory.total [MiB]\n");
    for (unsigned i = 0; i < n; i++) {
        nvmlDevice_t d;
        nvmlMemory_v1_t m;
        if (nvmlDeviceGetHandleByIndex_v2(i, &d) == NVML_SUCCESS &&
            nvmlDeviceGetMemoryInfo(d, &m) == NVML_SUCCESS)
            printf("%llu MiB, %llu MiB\n", m.used >> 20, m.total >> 20);
    }
    nvmlShutdown();
    return 0;
}
