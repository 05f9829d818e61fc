/* sim_nvml: the simulated libnvidia-ml.so.1.
 *
 * Same entry points, struct versions and error codes as NVIDIA's library,
 * answering from the machine file and the shared ledger. A function the
 * machine file lists under "absent" answers NVML_ERROR_FUNCTION_NOT_FOUND,
 * which is how the product sees a driver too old to have it. */
#include <stdbool.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/cuda_api.h"
#include "gpu/nvml_api.h"
#include "sim/sim.h"

#ifdef _WIN32 /* nvml.dll: what a DLL exports is said at each definition */
#define EXPORT __declspec(dllexport)
#else
#define EXPORT __attribute__((visibility("default")))
#endif

struct nvmlDevice_st {
    unsigned index;
};

static struct nvmlDevice_st devices[SIM_MAX_GPUS];
static int initialized;

#define ENTER(fn)                                                                                  \
    struct sim *s = sim_get();                                                                     \
    if (!s)                                                                                        \
        return NVML_ERROR_DRIVER_NOT_LOADED;                                                       \
    if (sim_machine_absent(&s->machine, fn))                                                       \
        return NVML_ERROR_FUNCTION_NOT_FOUND;                                                      \
    if (!initialized)                                                                              \
        return NVML_ERROR_UNINITIALIZED;

#define DEVICE(d)                                                                                  \
    if (!(d) || (d) < devices || (d) >= devices + s->machine.ngpus)                                \
        return NVML_ERROR_INVALID_ARGUMENT;                                                        \
    const struct sim_gpu_def *g = &s->machine.gpus[(d)->index];                                    \
    (void)g;

EXPORT nvmlReturn_t nvmlInit_v2(void)
{
    struct sim *s = sim_get();
    if (!s)
        return NVML_ERROR_DRIVER_NOT_LOADED;
    for (unsigned i = 0; i < SIM_MAX_GPUS; i++)
        devices[i].index = i;
    initialized++;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlInit(void)
{
    return nvmlInit_v2();
}

EXPORT nvmlReturn_t nvmlShutdown(void)
{
    if (!initialized)
        return NVML_ERROR_UNINITIALIZED;
    initialized--;
    return NVML_SUCCESS;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t r)
{
    switch (r) {
    case NVML_SUCCESS:
        return "Success";
    case NVML_ERROR_UNINITIALIZED:
        return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
        return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
        return "Not Supported";
    case NVML_ERROR_INSUFFICIENT_SIZE:
        return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
        return "Driver Not Loaded";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
        return "Function Not Found";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
        return "Argument version mismatch";
    default:
        return "Unknown Error";
    }
}

static nvmlReturn_t copy_str(const char *src, char *dst, unsigned len)
{
    if (!dst)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(src) + 1 > len)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(dst, src, strlen(src) + 1);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *v, unsigned len)
{
    ENTER("nvmlSystemGetDriverVersion");
    return copy_str(s->machine.driver_version, v, len);
}

EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char *v, unsigned len)
{
    ENTER("nvmlSystemGetNVMLVersion");
    return copy_str(s->machine.nvml_version, v, len);
}

EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v)
{
    ENTER("nvmlSystemGetCudaDriverVersion_v2");
    if (!v)
        return NVML_ERROR_INVALID_ARGUMENT;
    *v = s->machine.cuda_version;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlSystemGetProcessName(unsigned pid, char *name, unsigned len)
{
    ENTER("nvmlSystemGetProcessName");
    for (unsigned i = 0; i < s->machine.ngpus; i++)
        for (unsigned j = 0; j < s->machine.gpus[i].nprocs; j++)
            if (s->machine.gpus[i].procs[j].pid == pid)
                return copy_str(s->machine.gpus[i].procs[j].name, name, len);
    /* the driver knows a process in a PID namespace by its host pid: the
     * simulated one keeps its real pid beside the one it lists */
    unsigned real = pid;
    sim_state_lock(&s->state);
    for (unsigned i = 0; i < SIM_SLOTS; i++) {
        const struct sim_slot *sl = &s->state.ledger->slots[i];
        if (sl->pid > 0 && sl->listed && sl->listed == pid)
            real = (unsigned)sl->pid;
    }
    sim_state_unlock(&s->state);
    /* like the real library: the name of a live process, from the OS */
    char buf[260];
    if (sim_state_proc_name(real, buf, sizeof buf) < 0)
        return NVML_ERROR_NOT_FOUND;
    return copy_str(buf, name, len);
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *count)
{
    ENTER("nvmlDeviceGetCount_v2");
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = s->machine.ngpus;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *d)
{
    ENTER("nvmlDeviceGetHandleByIndex_v2");
    if (!d || i >= s->machine.ngpus)
        return NVML_ERROR_INVALID_ARGUMENT;
    *d = &devices[i];
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *d)
{
    ENTER("nvmlDeviceGetHandleByUUID");
    if (!uuid || !d)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < s->machine.ngpus; i++)
        if (strcmp(s->machine.gpus[i].uuid, uuid) == 0) {
            *d = &devices[i];
            return NVML_SUCCESS;
        }
    return NVML_ERROR_NOT_FOUND;
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned len)
{
    ENTER("nvmlDeviceGetName");
    DEVICE(d);
    return copy_str(g->name, name, len);
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned len)
{
    ENTER("nvmlDeviceGetUUID");
    DEVICE(d);
    return copy_str(g->uuid, uuid, len);
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *pci)
{
    ENTER("nvmlDeviceGetPciInfo_v3");
    DEVICE(d);
    if (!pci)
        return NVML_ERROR_INVALID_ARGUMENT;
    memset(pci, 0, sizeof *pci);
    snprintf(pci->busId, sizeof pci->busId, "%s", g->pci_bus_id);
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%s", g->pci_bus_id + 4);
    sscanf(g->pci_bus_id, "%x:%x:%x", &pci->domain, &pci->bus, &pci->device);
    pci->pciDeviceId = 0x233510de;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned *minor)
{
    ENTER("nvmlDeviceGetMinorNumber");
    DEVICE(d);
    if (!minor)
        return NVML_ERROR_INVALID_ARGUMENT;
    *minor = g->minor;
    return NVML_SUCCESS;
}

static void memory_of(struct sim *s, unsigned i, uint64_t *reserved, uint64_t *used, uint64_t *free)
{
    const struct sim_gpu_def *g = &s->machine.gpus[i];
    sim_state_lock(&s->state);
    uint64_t u = sim_used_locked(s, i);
    sim_state_unlock(&s->state);
    *reserved = g->reserved;
    *used = u;
    *free = g->memory > g->reserved + u ? g->memory - g->reserved - u : 0;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_v1_t *m)
{
    ENTER("nvmlDeviceGetMemoryInfo");
    DEVICE(d);
    if (!m)
        return NVML_ERROR_INVALID_ARGUMENT;
    uint64_t reserved, used, free;
    memory_of(s, d->index, &reserved, &used, &free);
    m->total = g->memory;
    m->used = used + reserved; /* the old call folds the reserve into used */
    m->free = free;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
    ENTER("nvmlDeviceGetMemoryInfo_v2");
    DEVICE(d);
    if (!m)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (m->version != NVML_MEMORY_V2_VERSION)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    uint64_t reserved, used, free;
    memory_of(s, d->index, &reserved, &used, &free);
    m->total = g->memory;
    m->reserved = reserved;
    m->used = used;
    m->free = free;
    return NVML_SUCCESS;
}

/* The modes, limits, links, fan and maximum clocks answer in milliseconds
 * on a real driver's first sample (11 ms for them all on an H100, answers
 * NOT_SUPPORTED included), and so do the utilization (2.6 ms) and the
 * power draw (1 ms), where the memory and the process lists take
 * microseconds. VRAM_SIM_NVML_SLOW_MS=N in a process's environment makes
 * each of these calls take N ms; with VRAM_SIM_NVML_SLOW_SERIAL=1 the
 * driver answers one of them at a time, as if it could not do two at
 * once, else all at once from as many threads. */
static pthread_mutex_t slow_mu = PTHREAD_MUTEX_INITIALIZER;

static void slow_call(void)
{
    const char *v = getenv("VRAM_SIM_NVML_SLOW_MS");
    long ms = v ? strtol(v, NULL, 10) : 0;
    if (ms <= 0 || ms > 600000)
        return;
    const char *serial = getenv("VRAM_SIM_NVML_SLOW_SERIAL");
    bool one = serial && !strcmp(serial, "1");
    if (one)
        pthread_mutex_lock(&slow_mu);
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
    if (one)
        pthread_mutex_unlock(&slow_mu);
}

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
    ENTER("nvmlDeviceGetUtilizationRates");
    DEVICE(d);
    if (!u)
        return NVML_ERROR_INVALID_ARGUMENT;
    slow_call();
    u->gpu = g->util_gpu;
    u->memory = g->util_mem;
    return NVML_SUCCESS;
}

/* One plain getter: a number from the machine file, into an out pointer;
 * cost: what it takes the driver (slow_call, or nothing). */
#define GETTER(fn, type, expr, cost)                                                               \
    EXPORT nvmlReturn_t fn(nvmlDevice_t d, type *out)                                              \
    {                                                                                              \
        ENTER(#fn);                                                                                \
        DEVICE(d);                                                                                 \
        if (!out)                                                                                  \
            return NVML_ERROR_INVALID_ARGUMENT;                                                    \
        cost;                                                                                      \
        *out = (expr);                                                                             \
        return NVML_SUCCESS;                                                                       \
    }
#define UINT_GETTER(fn, expr)      GETTER(fn, unsigned, expr, (void)0)
#define INT_GETTER(fn, expr)       GETTER(fn, int, expr, (void)0)
#define SLOW_UINT_GETTER(fn, expr) GETTER(fn, unsigned, expr, slow_call())
#define SLOW_INT_GETTER(fn, expr)  GETTER(fn, int, expr, slow_call())

SLOW_UINT_GETTER(nvmlDeviceGetPowerUsage, g->power_mw)
SLOW_UINT_GETTER(nvmlDeviceGetEnforcedPowerLimit, g->power_limit_mw)
SLOW_UINT_GETTER(nvmlDeviceGetCurrPcieLinkGeneration, g->pcie_gen)
SLOW_UINT_GETTER(nvmlDeviceGetCurrPcieLinkWidth, g->pcie_width)
INT_GETTER(nvmlDeviceGetPerformanceState, (int)g->pstate)

SLOW_INT_GETTER(nvmlDeviceGetComputeMode, g->compute_mode)
SLOW_INT_GETTER(nvmlDeviceGetDisplayMode, g->display_attached ? 1 : 0)
SLOW_INT_GETTER(nvmlDeviceGetDisplayActive, g->display_active ? 1 : 0)

/* nvmlClockType_t: graphics, SM, memory, video (which follows graphics) */
static nvmlReturn_t clock_of(unsigned gfx, unsigned sm, unsigned mem, int type, unsigned *out)
{
    if (!out || type < 0 || type > 3)
        return NVML_ERROR_INVALID_ARGUMENT;
    *out = type == NVML_CLOCK_SM ? sm : type == NVML_CLOCK_MEM ? mem : gfx;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned *clock)
{
    ENTER("nvmlDeviceGetClockInfo");
    DEVICE(d);
    return clock_of(g->clock_gfx, g->clock_sm, g->clock_mem, type, clock);
}

EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned *clock)
{
    ENTER("nvmlDeviceGetMaxClockInfo");
    DEVICE(d);
    if (!clock || type < 0 || type > 3)
        return NVML_ERROR_INVALID_ARGUMENT;
    slow_call();
    return clock_of(g->max_gfx, g->max_sm, g->max_mem, type, clock);
}

/* The video engines' utilization over the driver's sampling period (a
 * sixth of a second on current cards); a card without an encoder (H100,
 * H200) answers NOT_SUPPORTED for it. */
EXPORT nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t d, unsigned *util,
                                                    unsigned *period_us)
{
    ENTER("nvmlDeviceGetEncoderUtilization");
    DEVICE(d);
    if (!util || !period_us)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (!g->has_encoder)
        return NVML_ERROR_NOT_SUPPORTED;
    *util = g->enc_util;
    *period_us = 166666;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t d, unsigned *util,
                                                    unsigned *period_us)
{
    ENTER("nvmlDeviceGetDecoderUtilization");
    DEVICE(d);
    if (!util || !period_us)
        return NVML_ERROR_INVALID_ARGUMENT;
    *util = g->dec_util;
    *period_us = 166666;
    return NVML_SUCCESS;
}

/* Like the driver: it counts the link's bytes for 20 ms while the caller
 * waits, then answers KB/s (nvmlPcieUtilCounter_t: 0 sent, 1 received). */
EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned *value)
{
    ENTER("nvmlDeviceGetPcieThroughput");
    DEVICE(d);
    if (!value || counter < NVML_PCIE_UTIL_TX_BYTES || counter > NVML_PCIE_UTIL_RX_BYTES)
        return NVML_ERROR_INVALID_ARGUMENT;
    struct timespec ts = {0, 20 * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
    *value = counter == NVML_PCIE_UTIL_TX_BYTES ? g->pcie_tx_kbs : g->pcie_rx_kbs;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int *mode)
{
    ENTER("nvmlDeviceGetPersistenceMode");
    DEVICE(d);
    if (!mode)
        return NVML_ERROR_INVALID_ARGUMENT;
    slow_call();
    if (g->driver_model >= 0) /* "For Linux only", says nvml.h */
        return NVML_ERROR_NOT_SUPPORTED;
    *mode = g->persistence ? 1 : 0;
    return NVML_SUCCESS;
}

/* Windows only: Linux drivers answer NOT_SUPPORTED. */
EXPORT nvmlReturn_t nvmlDeviceGetDriverModel(nvmlDevice_t d, int *current, int *pending)
{
    ENTER("nvmlDeviceGetDriverModel");
    DEVICE(d);
    if (!current || !pending)
        return NVML_ERROR_INVALID_ARGUMENT;
    slow_call();
    if (g->driver_model < 0)
        return NVML_ERROR_NOT_SUPPORTED;
    *current = *pending = g->driver_model;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t d, unsigned *speed)
{
    ENTER("nvmlDeviceGetFanSpeed");
    DEVICE(d);
    if (!speed)
        return NVML_ERROR_INVALID_ARGUMENT;
    slow_call();
    if (!g->has_fan)
        return NVML_ERROR_NOT_SUPPORTED;
    *speed = g->fan;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *mj)
{
    ENTER("nvmlDeviceGetTotalEnergyConsumption");
    DEVICE(d);
    if (!mj)
        return NVML_ERROR_INVALID_ARGUMENT;
    /* as if the board had drawn its power since the ledger was made */
    *mj = (unsigned long long)g->power_mw * (sim_now_ms() - s->state.ledger->created_ms) / 1000;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned *t)
{
    ENTER("nvmlDeviceGetTemperature");
    DEVICE(d);
    if (!t || sensor != 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    *t = g->temp_c;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned *cur, unsigned *pending)
{
    ENTER("nvmlDeviceGetMigMode");
    DEVICE(d);
    if (!cur || !pending)
        return NVML_ERROR_INVALID_ARGUMENT;
    slow_call();
    *cur = *pending = g->mig ? 1 : 0;
    return NVML_SUCCESS;
}

/* The processes of one kind on a GPU: static ones from the file, then every
 * live process of the ledger. */
struct rec {
    uint32_t pid;
    uint64_t used;
};

static unsigned gather(struct sim *s, unsigned gpu, unsigned type, struct rec *out, unsigned max)
{
    const struct sim_gpu_def *g = &s->machine.gpus[gpu];
    unsigned n = 0;
    for (unsigned i = 0; i < g->nprocs && n < max; i++)
        if (g->procs[i].type & type)
            out[n++] = (struct rec){g->procs[i].pid, g->procs[i].used};
    sim_state_lock(&s->state);
    sim_state_used(&s->state, gpu); /* drops the dead */
    for (unsigned i = 0; i < SIM_SLOTS && n < max; i++) {
        const struct sim_slot *sl = &s->state.ledger->slots[i];
        /* a checkpointed process holds nothing on the GPU: the driver does not list it */
        if (sl->pid > 0 && sl->gpu == gpu && (sl->type & type) &&
            sl->ckpt != CU_PROCESS_STATE_CHECKPOINTED)
            out[n++] = (struct rec){sim_slot_listed_pid(sl), sl->used};
    }
    sim_state_unlock(&s->state);
    return n;
}

/* A driver under load answers its process lists slowly (seconds, seen on
 * busy multi-GPU hosts): VRAM_SIM_NVML_DELAY_MS in a process's environment
 * makes each of its process-list queries take that long. */
static void slow_answer(void)
{
    const char *v = getenv("VRAM_SIM_NVML_DELAY_MS");
    long ms = v ? strtol(v, NULL, 10) : 0;
    if (ms <= 0 || ms > 600000)
        return;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* NVML's array convention: *count is the capacity in; the number of
 * processes out; INSUFFICIENT_SIZE (with the count needed) when too small. */
static nvmlReturn_t write_records(struct sim *s, nvmlDevice_t d, unsigned type, size_t stride,
                                  unsigned *count, void *buf)
{
    slow_answer();
    struct rec recs[SIM_MAX_PROCS + SIM_SLOTS];
    unsigned n = gather(s, d->index, type, recs, SIM_MAX_PROCS + SIM_SLOTS);
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (*count < n || (n && !buf)) {
        *count = n;
        return n ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
    }
    /* WDDM keeps each process's memory to itself: NVML lists the process
     * with usedGpuMemory NOT_AVAILABLE (nvidia-smi's "N/A") */
    const uint64_t na = NVML_VALUE_NOT_AVAILABLE;
    bool wddm = s->machine.gpus[d->index].driver_model == NVML_DRIVER_WDDM;
    for (unsigned i = 0; i < n; i++) {
        unsigned char *r = (unsigned char *)buf + (size_t)i * stride;
        memset(r, 0, stride);
        memcpy(r, &recs[i].pid, 4);
        memcpy(r + 8, wddm ? &na : &recs[i].used, 8);
        if (stride >= 24)
            memset(r + 16, 0xff, 8); /* gpuInstanceId, computeInstanceId: no MIG */
    }
    *count = n;
    return NVML_SUCCESS;
}

#define PROC_LIST(fn, type, stride_expr)                                                           \
    EXPORT nvmlReturn_t fn(nvmlDevice_t d, unsigned *count, void *buf)                             \
    {                                                                                              \
        ENTER(#fn);                                                                                \
        DEVICE(d);                                                                                 \
        return write_records(s, d, type, (stride_expr), count, buf);                               \
    }

PROC_LIST(nvmlDeviceGetComputeRunningProcesses_v3, SIM_PT_COMPUTE, s->machine.proc_record_size)
PROC_LIST(nvmlDeviceGetComputeRunningProcesses_v2, SIM_PT_COMPUTE, 24)
PROC_LIST(nvmlDeviceGetComputeRunningProcesses, SIM_PT_COMPUTE, 16)
PROC_LIST(nvmlDeviceGetGraphicsRunningProcesses_v3, SIM_PT_GRAPHICS, s->machine.proc_record_size)
PROC_LIST(nvmlDeviceGetGraphicsRunningProcesses_v2, SIM_PT_GRAPHICS, 24)
PROC_LIST(nvmlDeviceGetGraphicsRunningProcesses, SIM_PT_GRAPHICS, 16)
PROC_LIST(nvmlDeviceGetMPSComputeRunningProcesses_v3, SIM_PT_MPS, s->machine.proc_record_size)
PROC_LIST(nvmlDeviceGetMPSComputeRunningProcesses_v2, SIM_PT_MPS, 24)
PROC_LIST(nvmlDeviceGetMPSComputeRunningProcesses, SIM_PT_MPS, 16)

EXPORT nvmlReturn_t nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t d,
                                                          nvmlProcessDetailList_v1_t *l)
{
    ENTER("nvmlDeviceGetRunningProcessDetailList");
    DEVICE(d);
    if (!l)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (l->version != NVML_PROCESS_DETAIL_LIST_V1_VERSION)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    static const unsigned types[] = {SIM_PT_COMPUTE, SIM_PT_GRAPHICS, SIM_PT_MPS};
    if (l->mode > 2)
        return NVML_ERROR_INVALID_ARGUMENT;
    return write_records(s, d, types[l->mode], sizeof(nvmlProcessDetail_v1_t),
                         &l->numProcArrayEntries, l->procArray);
}

/* Like the driver: one sample per process that did work since lastSeen (in
 * microseconds), NOT_FOUND when none did; a NULL buffer asks for the size. */
EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d,
                                                    nvmlProcessUtilizationSample_t *out,
                                                    unsigned *count, unsigned long long lastSeen)
{
    ENTER("nvmlDeviceGetProcessUtilization");
    DEVICE(d);
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    nvmlProcessUtilizationSample_t got[SIM_MAX_PROCS + SIM_SLOTS];
    unsigned n = 0;
    /* the file's processes with a share given: a sample taken just now */
    unsigned long long now_us = (unsigned long long)sim_now_ms() * 1000;
    const struct sim_gpu_def *gd = &s->machine.gpus[d->index];
    for (unsigned i = 0; i < gd->nprocs; i++)
        if (gd->procs[i].has_util && now_us > lastSeen)
            got[n++] = (nvmlProcessUtilizationSample_t){
                gd->procs[i].pid,       now_us,
                gd->procs[i].sm_util,   gd->procs[i].mem_util,
                gd->procs[i].enc_util,  gd->procs[i].dec_util};
    sim_state_lock(&s->state);
    sim_state_used(&s->state, d->index); /* drops the dead */
    for (unsigned i = 0; i < SIM_SLOTS; i++) {
        const struct sim_slot *sl = &s->state.ledger->slots[i];
        if (sl->pid > 0 && sl->gpu == d->index && sl->busy_ms && sl->busy_ms * 1000 > lastSeen)
            got[n++] = (nvmlProcessUtilizationSample_t){
                sim_slot_listed_pid(sl), sl->busy_ms * 1000, 60, 20, 0, 0};
    }
    sim_state_unlock(&s->state);
    if (!out) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (n == 0)
        return NVML_ERROR_NOT_FOUND;
    if (*count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    memcpy(out, got, n * sizeof *got);
    *count = n;
    return NVML_SUCCESS;
}
