/* status_phases: where the start of `vram status` goes on a real GPU,
 * phase by phase, each measured in fresh processes (a library loads once
 * per process, and NVML's first start differs from a second): loading
 * libnvidia-ml, nvmlInit, the first handle (attaching the GPU), loading
 * libcuda for the CUDA version alone and on a thread beside NVML's start
 * (as probe_open_ahead does: does one loading wait for the other?), the
 * slow calls of a first sample, what a PCIe throughput reading costs (wall
 * and CPU: vram top reads it on a thread), and the end of the process with
 * and without nvmlShutdown. Medians and p90 of ROUNDS runs (default 20).
 *
 *   vram-status-phases [ROUNDS] */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gpu/nvml_api.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

struct cuda_run {
    double start, end;
    int version;
};

static void *load_cuda(void *arg)
{
    struct cuda_run *c = arg;
    c->start = now_us();
    void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    int (*get)(int *) = lib ? (int (*)(int *))dlsym(lib, "cuDriverGetVersion") : NULL;
    if (get)
        get(&c->version);
    c->end = now_us();
    return NULL;
}

/* One child: its phase's figures as "name microseconds" lines. */
static int child(const char *mode)
{
    double t0 = now_us();
    if (!strcmp(mode, "cuda")) {
        struct cuda_run c = {0};
        load_cuda(&c);
        printf("libcuda alone: dlopen + cuDriverGetVersion %.0f\n", c.end - c.start);
        return 0;
    }
    pthread_t th;
    struct cuda_run c = {0};
    bool both = !strcmp(mode, "both");
    if (both)
        pthread_create(&th, NULL, load_cuda, &c);
    double a = now_us();
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return 3;
    double b = now_us();
#define X(name, ret, args) __attribute__((unused)) ret(*name) args = (ret(*) args)dlsym(lib, #name);
    NVML_FUNCS(X)
#undef X
    nvmlInit_v2();
    double c1 = now_us();
    nvmlDevice_t d;
    nvmlDeviceGetHandleByIndex_v2(0, &d);
    double c2 = now_us();
    if (both) {
        pthread_join(th, NULL);
        double c3 = now_us();
        printf("beside NVML: libcuda loaded in %.0f\n", c.end - c.start);
        printf("beside NVML: NVML loaded in %.0f\n", b - a);
        printf("beside NVML: NVML ready (loaded, started, attached) at %.0f\n", c2 - t0);
        printf("beside NVML: both done at %.0f\n", c3 - t0);
        return 0;
    }
    printf("dlopen libnvidia-ml %.0f\n", b - a);
    printf("nvmlInit_v2 %.0f\n", c1 - b);
    printf("first handle %.0f\n", c2 - c1);
    if (!strcmp(mode, "slow")) {
        unsigned n = 0, v, w;
        int iv;
        nvmlDeviceGetCount_v2(&n);
        double s0 = now_us();
        for (unsigned i = 0; i < n; i++) {
            nvmlDeviceGetHandleByIndex_v2(i, &d);
            nvmlDeviceGetEnforcedPowerLimit(d, &v);
            nvmlDeviceGetPersistenceMode(d, &iv);
            nvmlDeviceGetComputeMode(d, &iv);
            nvmlDeviceGetDisplayMode(d, &iv);
            nvmlDeviceGetDisplayActive(d, &iv);
            nvmlDeviceGetMigMode(d, &v, &w);
            nvmlDeviceGetCurrPcieLinkGeneration(d, &v);
            nvmlDeviceGetCurrPcieLinkWidth(d, &v);
            nvmlDeviceGetFanSpeed(d, &v);
            if (nvmlDeviceGetMaxClockInfo)
                nvmlDeviceGetMaxClockInfo(d, 1, &v), nvmlDeviceGetMaxClockInfo(d, 2, &v);
        }
        printf("the slow calls of a first sample, every GPU %.0f\n", now_us() - s0);
        /* what vram top adds to each refresh, on every GPU */
        s0 = now_us();
        for (unsigned i = 0; i < n; i++) {
            nvmlDeviceGetHandleByIndex_v2(i, &d);
            if (nvmlDeviceGetClockInfo)
                for (int k = 0; k < 3; k++)
                    nvmlDeviceGetClockInfo(d, k, &v);
            if (nvmlDeviceGetEncoderUtilization)
                nvmlDeviceGetEncoderUtilization(d, &v, &w);
            if (nvmlDeviceGetDecoderUtilization)
                nvmlDeviceGetDecoderUtilization(d, &v, &w);
            if (nvmlDeviceGetProcessUtilization) {
                nvmlProcessUtilizationSample_t smp[64];
                unsigned cnt = 0;
                nvmlDeviceGetProcessUtilization(d, NULL, &cnt, 0);
                cnt = 64;
                nvmlDeviceGetProcessUtilization(d, smp, &cnt, 0);
            }
        }
        printf("vram top's calls of a refresh (clocks, video engines, process shares), every GPU %.0f\n",
               now_us() - s0);
    }
    if (!strcmp(mode, "pcie") && nvmlDeviceGetPcieThroughput) {
        /* the driver counts 20 ms: does it sleep or spin meanwhile? */
        struct timespec cpu0, cpu1;
        unsigned v;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
        double w0 = now_us();
        for (int k = 0; k < 5; k++)
            nvmlDeviceGetPcieThroughput(d, k & 1, &v);
        double w = now_us() - w0;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
        double cpu = (double)(cpu1.tv_sec - cpu0.tv_sec) * 1e6 + (double)(cpu1.tv_nsec - cpu0.tv_nsec) / 1e3;
        printf("nvmlDeviceGetPcieThroughput, wall a call %.0f\n", w / 5);
        printf("nvmlDeviceGetPcieThroughput, CPU a call %.0f\n", cpu / 5);
    }
    fflush(stdout);
    /* the end: what the parent measures from this line to its wait */
    printf("@end %.3f\n", now_us());
    fflush(stdout);
    if (!strcmp(mode, "shutdown"))
        nvmlShutdown();
    if (!strcmp(mode, "quick"))
        _exit(0);
    exit(0);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define MAX_KEYS 32
#define MAX_ROUNDS 200

struct series {
    char name[96];
    double v[MAX_ROUNDS];
    int n;
};

static struct series series[MAX_KEYS];
static int nseries;

static void add(const char *name, double v)
{
    int k = 0;
    while (k < nseries && strcmp(series[k].name, name))
        k++;
    if (k == nseries) {
        if (nseries == MAX_KEYS)
            return;
        snprintf(series[nseries++].name, sizeof series[0].name, "%s", name);
    }
    if (series[k].n < MAX_ROUNDS)
        series[k].v[series[k].n++] = v;
}

/* Runs `self child MODE` once, its lines into the series. */
static void run(const char *self, const char *mode)
{
    int fd[2];
    if (pipe(fd) < 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        execl(self, self, "child", mode, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    FILE *f = fdopen(fd[0], "r");
    char line[256];
    double end = 0;
    while (f && fgets(line, sizeof line, f)) {
        char *sp = strrchr(line, ' ');
        if (!sp)
            continue;
        *sp = '\0';
        if (!strcmp(line, "@end"))
            end = atof(sp + 1);
        else
            add(line, atof(sp + 1));
    }
    if (f)
        fclose(f);
    waitpid(pid, NULL, 0);
    if (end > 0) {
        char name[96];
        snprintf(name, sizeof name, "the process's end after NVML started, %s",
                 !strcmp(mode, "shutdown") ? "nvmlShutdown then exit()"
                 : !strcmp(mode, "quick")  ? "_exit() (no library destructors)"
                                           : "exit() without nvmlShutdown (vram's)");
        add(name, now_us() - end);
    }
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "child"))
        return child(argv[2]);
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    if (rounds < 1 || rounds > MAX_ROUNDS)
        rounds = 20;
    static const char *const modes[] = {"nvml", "cuda", "both", "slow", "pcie", "exit", "shutdown",
                                        "quick"};
    for (int r = 0; r < rounds; r++) /* interleaved, as the whole-process bench */
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
            run("/proc/self/exe", modes[m]);
    printf("\nvram status's start, phase by phase: %d fresh processes each\n", rounds);
    printf("%-64s %10s %10s\n", "phase", "median us", "p90 us");
    for (int k = 0; k < nseries; k++) {
        qsort(series[k].v, (size_t)series[k].n, sizeof series[k].v[0], cmp);
        printf("%-64s %10.0f %10.0f\n", series[k].name, series[k].v[series[k].n / 2],
               series[k].v[series[k].n * 9 / 10]);
    }
    return 0;
}
