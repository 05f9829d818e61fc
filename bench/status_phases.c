/* status_phases: where the start of `vram status` goes on a real GPU,
 * phase by phase, each measured in fresh processes (a library loads once
 * per process, and NVML's first start differs from a second): loading
 * libnvidia-ml, nvmlInit, the first handle (attaching the GPU), loading
 * libcuda for the CUDA version alone and on a thread beside NVML's start
 * (as probe_open_ahead does: does one loading wait for the other?), the
 * slow calls of a first sample, what a PCIe throughput reading costs (wall
 * and CPU: vram top reads it on a thread), and the end of the process with
 * and without nvmlShutdown. Then the slow tier call by call: each alone as
 * the first call after the handles (and a second time), each in vram's
 * order one after the other, and the tier's parts on threads at once as
 * probe/slowcalls.c asks them (with what starting the threads costs): does
 * the driver answer them at once, or one at a time? Medians and p90 of
 * ROUNDS runs (default 20).
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

#define X(name, ret, args) static ret(*name) args;
NVML_FUNCS(X)
#undef X

static bool load_nvml(void *lib)
{
#define X(name, ret, args) *(void **)&name = dlsym(lib, #name);
    NVML_FUNCS(X)
#undef X
    return nvmlInit_v2 && nvmlDeviceGetHandleByIndex_v2 && nvmlDeviceGetCount_v2;
}

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

/* The slow tier of a first sample, as gpu/nvml.c's parts ask it: each
 * call, and the part it belongs to (one or two calls). */
static const struct {
    const char *name;
    int part;
} calls[] = {
    {"nvmlDeviceGetDriverModel", 0},
    {"nvmlDeviceGetDisplayMode", 1},
    {"nvmlDeviceGetDisplayActive", 1},
    {"nvmlDeviceGetEnforcedPowerLimit", 2},
    {"nvmlDeviceGetPersistenceMode", 3},
    {"nvmlDeviceGetComputeMode", 4},
    {"nvmlDeviceGetMigMode", 5},
    {"nvmlDeviceGetCurrPcieLinkGeneration", 6},
    {"nvmlDeviceGetCurrPcieLinkWidth", 6},
    {"nvmlDeviceGetFanSpeed", 7},
    {"nvmlDeviceGetMaxClockInfo(SM)", 8},
    {"nvmlDeviceGetMaxClockInfo(memory)", 8},
};
#define NCALLS (int)(sizeof calls / sizeof calls[0])
#define NPARTS 9

static int ask_call(int k, nvmlDevice_t d)
{
    unsigned u, w;
    int v, x;
    switch (k) {
    case 0:
        return nvmlDeviceGetDriverModel ? nvmlDeviceGetDriverModel(d, &v, &x) : -1;
    case 1:
        return nvmlDeviceGetDisplayMode ? nvmlDeviceGetDisplayMode(d, &v) : -1;
    case 2:
        return nvmlDeviceGetDisplayActive ? nvmlDeviceGetDisplayActive(d, &v) : -1;
    case 3:
        return nvmlDeviceGetEnforcedPowerLimit ? nvmlDeviceGetEnforcedPowerLimit(d, &u) : -1;
    case 4:
        return nvmlDeviceGetPersistenceMode ? nvmlDeviceGetPersistenceMode(d, &v) : -1;
    case 5:
        return nvmlDeviceGetComputeMode ? nvmlDeviceGetComputeMode(d, &v) : -1;
    case 6:
        return nvmlDeviceGetMigMode ? nvmlDeviceGetMigMode(d, &u, &w) : -1;
    case 7:
        return nvmlDeviceGetCurrPcieLinkGeneration ? nvmlDeviceGetCurrPcieLinkGeneration(d, &u)
                                                   : -1;
    case 8:
        return nvmlDeviceGetCurrPcieLinkWidth ? nvmlDeviceGetCurrPcieLinkWidth(d, &u) : -1;
    case 9:
        return nvmlDeviceGetFanSpeed ? nvmlDeviceGetFanSpeed(d, &u) : -1;
    case 10:
        return nvmlDeviceGetMaxClockInfo ? nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_SM, &u) : -1;
    case 11:
        return nvmlDeviceGetMaxClockInfo ? nvmlDeviceGetMaxClockInfo(d, NVML_CLOCK_MEM, &u) : -1;
    }
    return -1;
}

/* Calls vram does not make that could stand for a slow one, each asked
 * alone as a first call (alt:K): the power limit another way. */
static const char *const alts[] = {"nvmlDeviceGetPowerManagementLimit",
                                   "nvmlDeviceGetPowerManagementDefaultLimit"};
#define NALTS (int)(sizeof alts / sizeof alts[0])

#define MAX_GPUS 64
static nvmlDevice_t dev[MAX_GPUS];
static unsigned ndev;

/* The parts on threads, as probe/slowcalls.c: items (GPU, part), GPUs
 * first, taken from a shared counter by up to 8 threads and the caller. */
static unsigned next_item;

static void *take_parts(void *arg)
{
    (void)arg;
    for (;;) {
        unsigned k = __atomic_fetch_add(&next_item, 1, __ATOMIC_RELAXED);
        if (k >= NPARTS * ndev)
            return NULL;
        for (int c = 0; c < NCALLS; c++)
            if (calls[c].part == (int)(k / ndev))
                ask_call(c, dev[k % ndev]);
    }
}

static void *nothing(void *arg)
{
    return arg;
}

static double cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Modes one:K (call K alone, then again), seq (the tier in turn), par
 * (the tier's parts at once), after every GPU's handle. */
static void slow_tier(const char *mode)
{
    nvmlDeviceGetCount_v2(&ndev);
    if (ndev > MAX_GPUS)
        ndev = MAX_GPUS;
    for (unsigned i = 0; i < ndev; i++)
        nvmlDeviceGetHandleByIndex_v2(i, &dev[i]);
    if (!ndev)
        return;
    if (!strncmp(mode, "one:", 4)) {
        int k = atoi(mode + 4);
        if (k < 0 || k >= NCALLS)
            return;
        double t0 = now_us();
        int rc = ask_call(k, dev[0]);
        double t1 = now_us();
        ask_call(k, dev[0]);
        double t2 = now_us();
        printf("alone, first call: %s (rc %d) %.0f\n", calls[k].name, rc, t1 - t0);
        printf("alone, second call: %s %.0f\n", calls[k].name, t2 - t1);
    } else if (!strncmp(mode, "alt:", 4)) {
        int k = atoi(mode + 4);
        void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_NOLOAD);
        nvmlReturn_t (*f)(nvmlDevice_t, unsigned *) =
            k >= 0 && k < NALTS && lib ? (nvmlReturn_t(*)(nvmlDevice_t, unsigned *))dlsym(lib, alts[k])
                                       : NULL;
        if (!f)
            return;
        unsigned u;
        double t0 = now_us();
        int rc = f(dev[0], &u);
        printf("alone, first call: %s (rc %d) %.0f\n", alts[k], rc, now_us() - t0);
    } else if (!strcmp(mode, "seq")) {
        double total = 0;
        for (int k = 0; k < NCALLS; k++) {
            double t0 = now_us();
            for (unsigned i = 0; i < ndev; i++)
                ask_call(k, dev[i]);
            double t = now_us() - t0;
            total += t;
            printf("in turn, every GPU: %s %.0f\n", calls[k].name, t);
        }
        printf("the slow tier in turn, every GPU (vram before) %.0f\n", total);
    } else if (!strcmp(mode, "par")) {
        enum { THREADS = 8 };
        pthread_t th[THREADS];
        unsigned n = NPARTS * ndev - 1 < THREADS ? NPARTS * ndev - 1 : THREADS, started = 0;
        double t0 = now_us();
        for (unsigned t = 0; t < n; t++)
            if (pthread_create(&th[t], NULL, nothing, NULL) == 0)
                pthread_join(th[t], NULL);
        printf("%u threads started and joined, nothing asked (what slowcalls adds at most) %.0f\n", n,
               now_us() - t0);
        double c0 = cpu_us();
        t0 = now_us();
        while (started < n && pthread_create(&th[started], NULL, take_parts, NULL) == 0)
            started++;
        take_parts(NULL);
        for (unsigned t = 0; t < started; t++)
            pthread_join(th[t], NULL);
        printf("the slow tier at once, %u threads and the caller from the start, every GPU %.0f\n",
               started, now_us() - t0);
        printf("the slow tier at once: CPU of the process %.0f\n", cpu_us() - c0);
    }
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
    if (!load_nvml(lib))
        return 3;
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
    if (!strncmp(mode, "one:", 4) || !strcmp(mode, "seq") || !strcmp(mode, "par")) {
        slow_tier(mode);
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

#define MAX_KEYS 96
#define MAX_ROUNDS 200

struct series {
    char name[128];
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
                                        "quick", "seq", "par"};
    for (int r = 0; r < rounds; r++) { /* interleaved, as the whole-process bench */
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
            run("/proc/self/exe", modes[m]);
        for (int k = 0; k < NCALLS; k++) {
            char one[16];
            snprintf(one, sizeof one, "one:%d", k);
            run("/proc/self/exe", one);
        }
        for (int k = 0; k < NALTS; k++) {
            char one[16];
            snprintf(one, sizeof one, "alt:%d", k);
            run("/proc/self/exe", one);
        }
    }
    printf("\nvram status's start, phase by phase: %d fresh processes each\n", rounds);
    printf("%-78s %10s %10s\n", "phase", "median us", "p90 us");
    for (int k = 0; k < nseries; k++) {
        qsort(series[k].v, (size_t)series[k].n, sizeof series[k].v[0], cmp);
        printf("%-78s %10.0f %10.0f\n", series[k].name, series[k].v[series[k].n / 2],
               series[k].v[series[k].n * 9 / 10]);
    }
    return 0;
}
