/* nvml_calls: what each NVML call vram makes costs on this machine, so the
 * sampler can put the slow ones on a slower cadence. Prints the median of
 * N calls per entry point, and nvmlInit's cost with and without flags. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/nvml_api.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define N 200
static double samples[N];

#define TIME(label, call)                                                                          \
    do {                                                                                           \
        int rc_ = 0;                                                                               \
        for (int i_ = 0; i_ < N; i_++) {                                                           \
            double t0_ = now_us();                                                                 \
            rc_ = (call);                                                                          \
            samples[i_] = now_us() - t0_;                                                          \
        }                                                                                          \
        qsort(samples, N, sizeof samples[0], cmp);                                                 \
        printf("%-44s %10.2f %10.2f   rc %d\n", label, samples[N / 2], samples[N * 9 / 10], rc_);  \
    } while (0)

int main(int argc, char **argv)
{
    unsigned flags = argc > 1 ? (unsigned)atoi(argv[1]) : 0;
    double t0 = now_us();
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 3;
    }
    double t1 = now_us();
    nvmlReturn_t (*initf)(unsigned) = (nvmlReturn_t(*)(unsigned))dlsym(lib, "nvmlInitWithFlags");
    nvmlReturn_t (*init)(void) = (nvmlReturn_t(*)(void))dlsym(lib, "nvmlInit_v2");
    nvmlReturn_t rc = flags ? initf(flags) : init();
    double t2 = now_us();
    printf("dlopen %.0f us, nvmlInit%s %.0f us (rc %d)\n", t1 - t0, flags ? "WithFlags" : "_v2",
           t2 - t1, rc);
#define X(name, ret, args) __attribute__((unused)) ret(*name) args = (ret(*) args)dlsym(lib, #name);
    NVML_FUNCS(X)
#undef X
    nvmlDevice_t d;
    t1 = now_us();
    rc = nvmlDeviceGetHandleByIndex_v2(0, &d);
    printf("first handle %.0f us (rc %d)\n", now_us() - t1, rc);
    /* the first call loads libcuda.so.1 (vram status asks libcuda itself,
     * on a thread while NVML starts: src/probe/probe.c) */
    int cv = 0;
    t1 = now_us();
    rc = nvmlSystemGetCudaDriverVersion_v2 ? nvmlSystemGetCudaDriverVersion_v2(&cv) : -1;
    printf("first nvmlSystemGetCudaDriverVersion_v2 %.0f us (rc %d, %d)\n", now_us() - t1, rc, cv);
    printf("%-44s %10s %10s %10s\n", "call", "first us", "median us", "p90 us");
    nvmlMemory_v2_t m2 = {.version = NVML_MEMORY_V2_VERSION};
    nvmlMemory_v1_t m1;
    nvmlUtilization_t u;
    unsigned v, w;
    int iv;
    unsigned long long e;
    char buf[128];
    unsigned char procs[64 * 32];
    TIME("nvmlDeviceGetMemoryInfo_v2", nvmlDeviceGetMemoryInfo_v2(d, &m2));
    TIME("nvmlDeviceGetMemoryInfo", nvmlDeviceGetMemoryInfo(d, &m1));
    TIME("nvmlDeviceGetUtilizationRates", nvmlDeviceGetUtilizationRates(d, &u));
    TIME("nvmlDeviceGetPowerUsage", nvmlDeviceGetPowerUsage(d, &v));
    TIME("nvmlDeviceGetEnforcedPowerLimit", nvmlDeviceGetEnforcedPowerLimit(d, &v));
    TIME("nvmlDeviceGetTotalEnergyConsumption", nvmlDeviceGetTotalEnergyConsumption(d, &e));
    TIME("nvmlDeviceGetTemperature", nvmlDeviceGetTemperature(d, 0, &v));
    TIME("nvmlDeviceGetPerformanceState", nvmlDeviceGetPerformanceState(d, &iv));
    TIME("nvmlDeviceGetPersistenceMode", nvmlDeviceGetPersistenceMode(d, &iv));
    TIME("nvmlDeviceGetComputeMode", nvmlDeviceGetComputeMode(d, &iv));
    TIME("nvmlDeviceGetDisplayMode", nvmlDeviceGetDisplayMode(d, &iv));
    TIME("nvmlDeviceGetDisplayActive", nvmlDeviceGetDisplayActive(d, &iv));
    TIME("nvmlDeviceGetMigMode", nvmlDeviceGetMigMode(d, &v, &w));
    TIME("nvmlDeviceGetCurrPcieLinkGeneration", nvmlDeviceGetCurrPcieLinkGeneration(d, &v));
    TIME("nvmlDeviceGetCurrPcieLinkWidth", nvmlDeviceGetCurrPcieLinkWidth(d, &v));
    TIME("nvmlDeviceGetFanSpeed", nvmlDeviceGetFanSpeed(d, &v));
    /* Windows only: a Linux driver answers NOT_SUPPORTED (rc 3) */
    TIME("nvmlDeviceGetDriverModel", nvmlDeviceGetDriverModel(d, &iv, &iv));
    TIME("nvmlDeviceGetName", nvmlDeviceGetName(d, buf, sizeof buf));
    TIME("nvmlDeviceGetUUID", nvmlDeviceGetUUID(d, buf, sizeof buf));
    TIME("nvmlDeviceGetMinorNumber", nvmlDeviceGetMinorNumber(d, &v));
    unsigned n;
    TIME("nvmlDeviceGetComputeRunningProcesses_v3",
         (n = 64, nvmlDeviceGetComputeRunningProcesses_v3(d, &n, procs)));
    TIME("nvmlDeviceGetGraphicsRunningProcesses_v3",
         (n = 64, nvmlDeviceGetGraphicsRunningProcesses_v3(d, &n, procs)));
    TIME("nvmlDeviceGetMPSComputeRunningProcesses_v3",
         (n = 64, nvmlDeviceGetMPSComputeRunningProcesses_v3(d, &n, procs)));
    nvmlProcessDetail_v1_t arr[64];
    nvmlProcessDetailList_v1_t l;
    TIME("nvmlDeviceGetRunningProcessDetailList",
         (l = (nvmlProcessDetailList_v1_t){NVML_PROCESS_DETAIL_LIST_V1_VERSION, 0, 64, arr},
          nvmlDeviceGetRunningProcessDetailList ? nvmlDeviceGetRunningProcessDetailList(d, &l)
                                                : -1));
    TIME("nvmlSystemGetProcessName(self)", nvmlSystemGetProcessName(1, buf, sizeof buf));
    t1 = now_us();
    nvmlShutdown();
    printf("nvmlShutdown %.0f us\n", now_us() - t1);
    return 0;
}
