/* nvml: the one place that talks to NVIDIA's management library.
 *
 * Every entry point is looked up by name (dlsym, GetProcAddress); one that
 * is missing leaves its field "n/a" instead of failing the whole snapshot,
 * so one binary serves drivers from the 450 series to today's. How the
 * library is found is the OS's part: gpu/nvmlso.c on Linux, win/winnvml.c
 * on Windows, each calling nvml_attach. */
#include "gpu/nvml.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "gpu/nvml_api.h"
#include "gpu/nvproc.h"

struct nvml {
    void *lib;
    nvml_unload_fn unload;
#define X(name, ret, args) ret(*name) args;
    NVML_FUNCS(X)
#undef X
    unsigned count;
    nvmlDevice_t *dev;
    /* per GPU: snap_have bits the driver said it lacks, written with
     * atomics (the slow tier's parts run on threads of their own) */
    unsigned *nosup;
    bool skip_shutdown, keep_loaded;
};

int nvml_attach(struct nvml **out, void *lib, nvml_sym_fn sym, nvml_unload_fn unload, char *err,
                size_t errlen)
{
    *out = NULL;
    struct nvml *n = calloc(1, sizeof *n);
    if (!n) {
        unload(lib);
        snprintf(err, errlen, "out of memory");
        return VRAM_EFAIL;
    }
    n->lib = lib;
    n->unload = unload;
#define X(name, ret, args) *(void **)&n->name = sym(lib, #name);
    NVML_FUNCS(X)
#undef X
    nvmlReturn_t (*init)(void) = n->nvmlInit_v2 ? n->nvmlInit_v2 : n->nvmlInit;
    nvmlReturn_t rc = init ? init() : NVML_ERROR_FUNCTION_NOT_FOUND;
    if (rc != NVML_SUCCESS) {
        snprintf(err, errlen,
                 "NVML did not start (%s): is the NVIDIA driver loaded? "
                 "(nvidia-smi should work)",
                 n->nvmlErrorString ? n->nvmlErrorString(rc) : "no nvmlInit");
        unload(lib);
        free(n);
        return VRAM_ENODRIVER;
    }
    unsigned count = 0;
    if (!n->nvmlDeviceGetCount_v2 || n->nvmlDeviceGetCount_v2(&count) != NVML_SUCCESS)
        count = 0;
    n->dev = calloc(count ? count : 1, sizeof *n->dev);
    n->nosup = calloc(count ? count : 1, sizeof *n->nosup);
    if (!n->dev || !n->nosup) {
        nvml_close(n);
        snprintf(err, errlen, "out of memory");
        return VRAM_EFAIL;
    }
    for (unsigned i = 0; i < count; i++) {
        if (!n->nvmlDeviceGetHandleByIndex_v2 ||
            n->nvmlDeviceGetHandleByIndex_v2(i, &n->dev[n->count]) != NVML_SUCCESS)
            continue; /* a lost GPU: skip it rather than fail the others */
        n->count++;
    }
    *out = n;
    return VRAM_OK;
}

void nvml_close(struct nvml *n)
{
    if (!n)
        return;
    if (n->nvmlShutdown && !n->skip_shutdown)
        n->nvmlShutdown();
    if (!n->keep_loaded)
        n->unload(n->lib);
    free(n->dev);
    free(n->nosup);
    free(n);
}

void nvml_skip_shutdown(struct nvml *n)
{
    n->skip_shutdown = true;
}

void nvml_ending(struct nvml *n)
{
    n->skip_shutdown = n->keep_loaded = true;
}

unsigned nvml_count(const struct nvml *n)
{
    return n->count;
}

void nvml_system(struct nvml *n, struct snap *s)
{
    if (!n->nvmlSystemGetDriverVersion ||
        n->nvmlSystemGetDriverVersion(s->driver_version, sizeof s->driver_version))
        snprintf(s->driver_version, sizeof s->driver_version, "n/a");
    if (!n->nvmlSystemGetNVMLVersion ||
        n->nvmlSystemGetNVMLVersion(s->nvml_version, sizeof s->nvml_version))
        snprintf(s->nvml_version, sizeof s->nvml_version, "n/a");
    /* the CUDA version: probe.c asks libcuda itself (gpu/cudaver.h), on a
     * thread while NVML starts; NVML's own call would load libcuda here,
     * after the start, on the way of every `vram status` */
}

int nvml_cuda_version(struct nvml *n)
{
    int v = 0;
    if (!n->nvmlSystemGetCudaDriverVersion_v2 || n->nvmlSystemGetCudaDriverVersion_v2(&v))
        v = 0;
    return v;
}

void nvml_static(struct nvml *n, unsigned i, struct snap_gpu *g)
{
    nvmlDevice_t d = n->dev[i];
    g->index = i;
    if (!n->nvmlDeviceGetName || n->nvmlDeviceGetName(d, g->name, sizeof g->name))
        snprintf(g->name, sizeof g->name, "n/a");
    if (!n->nvmlDeviceGetUUID || n->nvmlDeviceGetUUID(d, g->uuid, sizeof g->uuid))
        snprintf(g->uuid, sizeof g->uuid, "n/a");
    nvmlPciInfo_t pci;
    memset(&pci, 0, sizeof pci);
    if (n->nvmlDeviceGetPciInfo_v3 && n->nvmlDeviceGetPciInfo_v3(d, &pci) == NVML_SUCCESS)
        snprintf(g->pci_bus_id, sizeof g->pci_bus_id, "%.31s", pci.busId);
    else
        snprintf(g->pci_bus_id, sizeof g->pci_bus_id, "n/a");
    unsigned minor = i;
    if (n->nvmlDeviceGetMinorNumber)
        n->nvmlDeviceGetMinorNumber(d, &minor);
    g->minor = minor;
}

static void read_memory(struct nvml *n, nvmlDevice_t d, struct snap_gpu *g)
{
    if (n->nvmlDeviceGetMemoryInfo_v2) {
        nvmlMemory_v2_t m;
        memset(&m, 0, sizeof m);
        m.version = NVML_MEMORY_V2_VERSION;
        if (n->nvmlDeviceGetMemoryInfo_v2(d, &m) == NVML_SUCCESS) {
            g->mem = (struct snap_mem){m.total, m.reserved, m.used, m.free, 2};
            g->have |= SNAP_HAVE_MEMORY;
            return;
        }
    }
    nvmlMemory_v1_t m;
    if (n->nvmlDeviceGetMemoryInfo && n->nvmlDeviceGetMemoryInfo(d, &m) == NVML_SUCCESS) {
        g->mem = (struct snap_mem){m.total, 0, m.used, m.free, 1};
        g->have |= SNAP_HAVE_MEMORY;
    }
}

/* A GPU that answered NOT_SUPPORTED once (an H200 has no fan) is not asked
 * again: some of these calls cost 130 us even to say no. */
static bool want(const struct nvml *n, unsigned i, unsigned field)
{
    return !(__atomic_load_n(&n->nosup[i], __ATOMIC_RELAXED) & field);
}

static bool got(struct nvml *n, unsigned i, unsigned field, nvmlReturn_t rc)
{
    if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND)
        __atomic_fetch_or(&n->nosup[i], field, __ATOMIC_RELAXED);
    return rc == NVML_SUCCESS;
}

#define ASK(n, i, field, fn, ...)                                                                  \
    ((n)->fn && want(n, i, field) && got(n, i, field, (n)->fn(__VA_ARGS__)))

void nvml_memory(struct nvml *n, unsigned i, struct snap_gpu *g)
{
    g->have &= ~(unsigned)SNAP_HAVE_MEMORY;
    read_memory(n, n->dev[i], g);
}

void nvml_gauges(struct nvml *n, unsigned i, struct snap_gpu *g)
{
    nvmlDevice_t d = n->dev[i];
    g->have &= ~(unsigned)(SNAP_HAVE_UTIL | SNAP_HAVE_POWER | SNAP_HAVE_TEMP | SNAP_HAVE_PSTATE);
    nvmlUtilization_t u;
    if (ASK(n, i, SNAP_HAVE_UTIL, nvmlDeviceGetUtilizationRates, d, &u)) {
        g->util_gpu = u.gpu;
        g->util_mem = u.memory;
        g->have |= SNAP_HAVE_UTIL;
    }
    if (ASK(n, i, SNAP_HAVE_POWER, nvmlDeviceGetPowerUsage, d, &g->power_mw))
        g->have |= SNAP_HAVE_POWER;
    if (ASK(n, i, SNAP_HAVE_TEMP, nvmlDeviceGetTemperature, d, 0, &g->temp_c))
        g->have |= SNAP_HAVE_TEMP;
    int v;
    if (ASK(n, i, SNAP_HAVE_PSTATE, nvmlDeviceGetPerformanceState, d, &v) && v >= 0 && v <= 15) {
        g->pstate = v;
        g->have |= SNAP_HAVE_PSTATE;
    }
}

void nvml_meters(struct nvml *n, unsigned i, struct snap_gpu *g)
{
    nvmlDevice_t d = n->dev[i];
    g->have &= ~(unsigned)(SNAP_HAVE_CLOCKS | SNAP_HAVE_ENCODER | SNAP_HAVE_DECODER);
    if (ASK(n, i, SNAP_HAVE_CLOCKS, nvmlDeviceGetClockInfo, d, NVML_CLOCK_SM, &g->clock_sm_mhz) &&
        ASK(n, i, SNAP_HAVE_CLOCKS, nvmlDeviceGetClockInfo, d, NVML_CLOCK_MEM, &g->clock_mem_mhz)) {
        /* the graphics clock follows the SM clock on every card since Volta */
        if (n->nvmlDeviceGetClockInfo(d, NVML_CLOCK_GRAPHICS, &g->clock_gfx_mhz) != NVML_SUCCESS)
            g->clock_gfx_mhz = g->clock_sm_mhz;
        g->have |= SNAP_HAVE_CLOCKS;
    }
    unsigned period_us;
    if (ASK(n, i, SNAP_HAVE_ENCODER, nvmlDeviceGetEncoderUtilization, d, &g->enc_util, &period_us))
        g->have |= SNAP_HAVE_ENCODER;
    if (ASK(n, i, SNAP_HAVE_DECODER, nvmlDeviceGetDecoderUtilization, d, &g->dec_util, &period_us))
        g->have |= SNAP_HAVE_DECODER;
}

int nvml_pcie_throughput(const struct nvml *n, unsigned i, unsigned *tx_kbs, unsigned *rx_kbs)
{
    if (!n->nvmlDeviceGetPcieThroughput || i >= n->count)
        return VRAM_EINPUT;
    nvmlReturn_t rc = n->nvmlDeviceGetPcieThroughput(n->dev[i], NVML_PCIE_UTIL_TX_BYTES, tx_kbs);
    if (rc == NVML_SUCCESS)
        rc = n->nvmlDeviceGetPcieThroughput(n->dev[i], NVML_PCIE_UTIL_RX_BYTES, rx_kbs);
    if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND)
        return VRAM_EINPUT;
    return rc == NVML_SUCCESS ? VRAM_OK : VRAM_EFAIL;
}

static const unsigned part_have[NVML_PARTS] = {
    [NVML_PART_DRIVER_MODEL] = SNAP_HAVE_DRIVER_MODEL,
    [NVML_PART_DISPLAY] = SNAP_HAVE_DISPLAY,
    [NVML_PART_POWER_LIMIT] = SNAP_HAVE_POWER_LIMIT,
    [NVML_PART_PERSISTENCE] = SNAP_HAVE_PERSISTENCE,
    [NVML_PART_COMPUTE_MODE] = SNAP_HAVE_COMPUTE_MODE,
    [NVML_PART_MIG] = SNAP_HAVE_MIG,
    [NVML_PART_PCIE] = SNAP_HAVE_PCIE,
    [NVML_PART_FAN] = SNAP_HAVE_FAN,
    [NVML_PART_MAX_CLOCKS] = SNAP_HAVE_MAX_CLOCKS,
};

unsigned nvml_part_have(enum nvml_part part)
{
    return (unsigned)part < NVML_PARTS ? part_have[part] : 0;
}

unsigned nvml_slow_part(struct nvml *n, unsigned i, enum nvml_part part, struct snap_gpu *g)
{
    nvmlDevice_t d = n->dev[i];
    unsigned f = nvml_part_have(part);
    int v, w;
    unsigned cur, pending;
    switch (part) {
    case NVML_PART_DRIVER_MODEL: /* Windows only: Linux drivers answer NOT_SUPPORTED, once */
        if (ASK(n, i, f, nvmlDeviceGetDriverModel, d, &v, &w) && v >= NVML_DRIVER_WDDM &&
            v <= NVML_DRIVER_MCDM) {
            g->driver_model = (enum snap_driver_model)v;
            return f;
        }
        return 0;
    case NVML_PART_DISPLAY:
        if (ASK(n, i, f, nvmlDeviceGetDisplayMode, d, &v) &&
            ASK(n, i, f, nvmlDeviceGetDisplayActive, d, &w)) {
            g->display_attached = v == 1;
            g->display_active = w == 1;
            return f;
        }
        return 0;
    case NVML_PART_POWER_LIMIT:
        return ASK(n, i, f, nvmlDeviceGetEnforcedPowerLimit, d, &g->power_limit_mw) ? f : 0;
    case NVML_PART_PERSISTENCE:
        if (ASK(n, i, f, nvmlDeviceGetPersistenceMode, d, &v)) {
            g->persistence = v == 1;
            return f;
        }
        return 0;
    case NVML_PART_COMPUTE_MODE:
        if (ASK(n, i, f, nvmlDeviceGetComputeMode, d, &v)) {
            g->compute_mode = v;
            return f;
        }
        return 0;
    case NVML_PART_MIG:
        if (ASK(n, i, f, nvmlDeviceGetMigMode, d, &cur, &pending)) {
            g->mig = cur == 1;
            return f;
        }
        return 0;
    case NVML_PART_PCIE:
        return ASK(n, i, f, nvmlDeviceGetCurrPcieLinkGeneration, d, &g->pcie_gen) &&
                       ASK(n, i, f, nvmlDeviceGetCurrPcieLinkWidth, d, &g->pcie_width)
                   ? f
                   : 0;
    case NVML_PART_FAN:
        return ASK(n, i, f, nvmlDeviceGetFanSpeed, d, &g->fan_pct) ? f : 0;
    case NVML_PART_MAX_CLOCKS:
        return ASK(n, i, f, nvmlDeviceGetMaxClockInfo, d, NVML_CLOCK_SM, &g->max_sm_mhz) &&
                       ASK(n, i, f, nvmlDeviceGetMaxClockInfo, d, NVML_CLOCK_MEM, &g->max_mem_mhz)
                   ? f
                   : 0;
    case NVML_PARTS:
        break;
    }
    return 0;
}

void nvml_slow(struct nvml *n, unsigned i, struct snap_gpu *g)
{
    for (unsigned k = 0; k < NVML_PARTS; k++) {
        unsigned have = nvml_slow_part(n, i, (enum nvml_part)k, g);
        g->have = (g->have & ~nvml_part_have((enum nvml_part)k)) | have;
    }
}

void nvml_energy(struct nvml *n, unsigned i, struct snap_gpu *g)
{
    unsigned long long mj;
    g->have &= ~(unsigned)SNAP_HAVE_ENERGY;
    if (ASK(n, i, SNAP_HAVE_ENERGY, nvmlDeviceGetTotalEnergyConsumption, n->dev[i], &mj)) {
        g->energy_mj = mj;
        g->have |= SNAP_HAVE_ENERGY;
    }
}

/* A growing list of processes, merged by pid. */
struct plist {
    struct snap_proc *v;
    size_t n, cap;
};

static int plist_add(struct plist *l, const struct nvproc_entry *e, unsigned type)
{
    for (size_t i = 0; i < l->n; i++) {
        struct snap_proc *p = &l->v[i];
        if (p->pid != e->pid)
            continue;
        /* listed as compute and graphics: one process, counted once */
        p->types |= type;
        if (e->used_known && (!p->used_known || e->used > p->used)) {
            p->used = e->used;
            p->used_known = true;
        }
        return 0;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        struct snap_proc *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    struct snap_proc *p = &l->v[l->n++];
    memset(p, 0, sizeof *p);
    p->pid = e->pid;
    p->types = type;
    p->used = e->used;
    p->used_known = e->used_known;
    return 0;
}

/* One list through the versioned detail call; -1 when it is not there. */
static int detail_list(struct nvml *n, nvmlDevice_t d, unsigned mode, uint64_t total,
                       struct nvproc_entry **ents, unsigned *count)
{
    if (!n->nvmlDeviceGetRunningProcessDetailList)
        return -1;
    unsigned cap = 32;
    for (int tries = 0; tries < 4; tries++) {
        nvmlProcessDetail_v1_t *arr = calloc(cap, sizeof *arr);
        if (!arr)
            return -1;
        nvmlProcessDetailList_v1_t l = {NVML_PROCESS_DETAIL_LIST_V1_VERSION, mode, cap, arr};
        nvmlReturn_t rc = n->nvmlDeviceGetRunningProcessDetailList(d, &l);
        if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
            free(arr);
            cap = l.numProcArrayEntries + 16;
            continue;
        }
        if (rc != NVML_SUCCESS) {
            free(arr);
            return -1;
        }
        unsigned got = l.numProcArrayEntries < cap ? l.numProcArrayEntries : cap;
        *ents = calloc(got ? got : 1, sizeof **ents);
        if (!*ents) {
            free(arr);
            return -1;
        }
        *count = nvproc_decode((const unsigned char *)arr, got, sizeof *arr, total, *ents, NULL);
        free(arr);
        return 0;
    }
    return -1;
}

/* One list through the classic calls, newest first, guarding against the
 * layout change of the 535 series (see nvproc.c). */
static int classic_list(nvml_proclist_fn v3, nvml_proclist_fn v2, nvml_proclist_fn v1,
                        nvmlDevice_t d, uint64_t total, struct nvproc_entry **ents, unsigned *count)
{
    nvml_proclist_fn fn = v3 ? v3 : v2 ? v2 : v1;
    size_t expected = fn == v1 ? sizeof(nvmlProcessInfo_v1_t) : sizeof(nvmlProcessInfo_v2_t);
    if (!fn)
        return -1;
    unsigned cap = 32;
    for (int tries = 0; tries < 4; tries++) {
        unsigned char *buf = malloc((size_t)cap * NVPROC_MAX_STRIDE);
        if (!buf)
            return -1;
        memset(buf, NVPROC_SENTINEL, (size_t)cap * NVPROC_MAX_STRIDE);
        /* tell the driver the capacity in records of the size we expect; the
         * buffer has room for the larger layout either way */
        unsigned n = cap;
        nvmlReturn_t rc = fn(d, &n, buf);
        if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
            free(buf);
            cap = n + 16;
            continue;
        }
        if (rc != NVML_SUCCESS) {
            free(buf);
            return -1;
        }
        if (n > cap)
            n = cap;
        size_t stride = nvproc_stride(buf, n, expected);
        *ents = calloc(n ? n : 1, sizeof **ents);
        if (!*ents) {
            free(buf);
            return -1;
        }
        *count = nvproc_decode(buf, n, stride, total, *ents, NULL);
        free(buf);
        return 0;
    }
    return -1;
}

int nvml_procs(struct nvml *n, unsigned i, uint64_t total, struct snap_proc **out, size_t *nout)
{
    static const struct {
        unsigned mode, type;
    } kinds[] = {
        {NVML_PROCESS_MODE_COMPUTE, SNAP_PT_COMPUTE},
        {NVML_PROCESS_MODE_GRAPHICS, SNAP_PT_GRAPHICS},
        {NVML_PROCESS_MODE_MPS, SNAP_PT_MPS},
    };
    const nvml_proclist_fn classic[3][3] = {
        {n->nvmlDeviceGetComputeRunningProcesses_v3, n->nvmlDeviceGetComputeRunningProcesses_v2,
         n->nvmlDeviceGetComputeRunningProcesses},
        {n->nvmlDeviceGetGraphicsRunningProcesses_v3, n->nvmlDeviceGetGraphicsRunningProcesses_v2,
         n->nvmlDeviceGetGraphicsRunningProcesses},
        {n->nvmlDeviceGetMPSComputeRunningProcesses_v3,
         n->nvmlDeviceGetMPSComputeRunningProcesses_v2, n->nvmlDeviceGetMPSComputeRunningProcesses},
    };
    struct plist l = {0};
    int answered = 0;
    for (int k = 0; k < 3; k++) {
        struct nvproc_entry *ents = NULL;
        unsigned count = 0;
        if (detail_list(n, n->dev[i], kinds[k].mode, total, &ents, &count) < 0 &&
            classic_list(classic[k][0], classic[k][1], classic[k][2], n->dev[i], total, &ents,
                         &count) < 0)
            continue;
        answered++;
        for (unsigned j = 0; j < count; j++) {
            if (plist_add(&l, &ents[j], kinds[k].type) < 0) {
                free(ents);
                free(l.v);
                return VRAM_EFAIL;
            }
        }
        free(ents);
    }
    *out = l.v;
    *nout = l.n;
    return answered ? VRAM_OK : VRAM_EFAIL;
}

int nvml_proc_name(struct nvml *n, unsigned pid, char *buf, size_t len)
{
    if (!n->nvmlSystemGetProcessName || len == 0)
        return -1;
    return n->nvmlSystemGetProcessName(pid, buf, (unsigned)len) == NVML_SUCCESS ? 0 : -1;
}

int nvml_activity(struct nvml *n, unsigned i, uint64_t since_us, struct nvml_busy **out,
                  size_t *nout)
{
    *out = NULL;
    *nout = 0;
    if (!n->nvmlDeviceGetProcessUtilization || !want(n, i, SNAP_HAVE_ACTIVITY))
        return VRAM_EFAIL;
    nvmlProcessUtilizationSample_t *v = NULL;
    unsigned count = 0;
    nvmlReturn_t rc = n->nvmlDeviceGetProcessUtilization(n->dev[i], NULL, &count, since_us);
    /* the size may grow between the two calls: try again a few times */
    for (int tries = 0; tries < 4 && rc == NVML_ERROR_INSUFFICIENT_SIZE; tries++) {
        count += 8;
        nvmlProcessUtilizationSample_t *w = realloc(v, count * sizeof *v);
        if (!w) {
            free(v);
            return VRAM_EFAIL;
        }
        v = w;
        rc = n->nvmlDeviceGetProcessUtilization(n->dev[i], v, &count, since_us);
    }
    if (rc == NVML_ERROR_NOT_FOUND || (rc == NVML_SUCCESS && count == 0)) {
        free(v);
        return VRAM_OK; /* nobody worked since since_us */
    }
    if (!got(n, i, SNAP_HAVE_ACTIVITY, rc)) {
        free(v);
        return VRAM_EFAIL;
    }
    struct nvml_busy *b = calloc(count, sizeof *b);
    if (!b) {
        free(v);
        return VRAM_EFAIL;
    }
    /* the driver's figures are percents: a larger one is a driver's bug,
     * not a reason to draw past a column */
#define PCT(x) ((uint8_t)((x) > 100 ? 100 : (x)))
    for (unsigned j = 0; j < count; j++)
        b[j] = (struct nvml_busy){v[j].pid,          v[j].timeStamp,     PCT(v[j].smUtil),
                                  PCT(v[j].memUtil), PCT(v[j].encUtil), PCT(v[j].decUtil)};
#undef PCT
    free(v);
    *out = b;
    *nout = count;
    return VRAM_OK;
}
