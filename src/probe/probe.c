/* probe: one snapshot of the machine, NVML joined with /proc.
 *
 * The GPU layer gives the processes, the host layer names them (core/join.c
 * says what happens to those it cannot), and a scan of /proc/ * /fd adds the
 * processes that hold the device open without being listed.
 *
 * Starting NVML costs 15-18 ms on an H200 (init, then attaching the GPU),
 * mostly waiting on the kernel; probe_open_ahead has threads do the rest
 * of the slow start in the meantime, what the caller will ask for: loading
 * libcuda for the CUDA version (NVML would load it after its start, in
 * line), the first /proc scan and the first user-name lookup, so that
 * `vram status` waits for the longest of them only. Nothing is loaded or
 * scanned that no sample asks for: `vram status` in text shows no CUDA
 * version, and loads no libcuda. */
#include "probe/probe.h"

#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/join.h"
#include "core/role.h"
#include "gpu/cudaver.h"
#include "gpu/nvml.h"
#include "host/proc.h"
#include "host/usercache.h"
#include "ipc/slices.h"
#include "probe/activity.h"
#include "probe/clockcache.h"
#include "probe/cpuuse.h"
#include "probe/pcie.h"
#include "probe/slowcalls.h"

struct probe {
    struct nvml *nvml;
    struct hostproc_ctx host;
    /* the last /proc scan, applied to every new process list until the next */
    struct hostproc_holder *holders;
    int nholders;
    /* the scan started by probe_open, until the first sample takes it */
    pthread_t prefetch;
    bool prefetching, pre_done; /* pre_done: the thread has finished (atomic) */
    struct hostproc_holder *pre_holders;
    int pre_n;
    /* the CUDA version, read on a thread of its own while NVML starts;
     * what the user's cache says of it (cached_driver: for which driver) */
    pthread_t cuda_thread;
    bool cuda_running, cuda_read, cache_read;
    int cuda_version, cached_cuda;
    char cached_driver[32];
    /* per GPU: who the driver saw working, newest sample first asked for */
    struct activity *act;
    struct cpuuse cpu;  /* each process's CPU time at the last process list */
    struct pcie *pcie;  /* the PCIe throughput's reader, from the first PROBE_PCIE */
};

static void *cuda_main(void *arg)
{
    struct probe *p = arg;
    p->cuda_version = cudaver_read();
    return NULL;
}

static void cuda_join(struct probe *p)
{
    if (!p->cuda_running)
        return;
    pthread_join(p->cuda_thread, NULL);
    p->cuda_running = false;
}

static void *prefetch_main(void *arg)
{
    struct probe *p = arg;
    p->pre_n = hostproc_nvidia_holders(&p->host, &p->pre_holders);
    __atomic_store_n(&p->pre_done, true, __ATOMIC_RELEASE);
    /* the first user-name lookup loads the NSS modules: do it here too */
    struct passwd pw, *res;
    char buf[1024];
    getpwuid_r(getuid(), &pw, buf, sizeof buf, &res);
    return NULL;
}

static bool start_scan(struct probe *p)
{
    p->pre_done = false;
    p->prefetching = pthread_create(&p->prefetch, NULL, prefetch_main, p) == 0;
    return p->prefetching;
}

static void prefetch_join(struct probe *p)
{
    if (!p->prefetching)
        return;
    pthread_join(p->prefetch, NULL);
    p->prefetching = false;
}

/* The CUDA version of a driver rarely changes and costs a load of libcuda
 * (milliseconds: the largest part of `vram status --json` on an H100 after
 * NVML's own start), so it is kept in the user's cache, with the driver's
 * version it belongs to. */
#define CUDA_CACHE "cuda-version"

static void read_cache(struct probe *p)
{
    char text[96];
    int v = 0;
    p->cache_read = true;
    if (usercache_read(CUDA_CACHE, text, sizeof text) > 0 &&
        sscanf(text, "%31s %d", p->cached_driver, &v) == 2 && v > 0 && v < 1000000)
        p->cached_cuda = v;
}

int probe_open(struct probe **out, const char *procroot, char *err, size_t errlen)
{
    return probe_open_ahead(out, procroot, 0, err, errlen);
}

int probe_open_ahead(struct probe **out, const char *procroot, unsigned ahead, char *err,
                     size_t errlen)
{
    *out = NULL;
    struct probe *p = calloc(1, sizeof *p);
    if (!p)
        return VRAM_EFAIL;
    hostproc_init(&p->host, procroot);
    if (ahead & PROBE_CUDA) {
        read_cache(p);
        if (!p->cached_cuda) /* the driver's version to check the cache against comes later */
            p->cuda_running = pthread_create(&p->cuda_thread, NULL, cuda_main, p) == 0;
    }
    if (ahead & PROBE_HOLDERS)
        start_scan(p);
    int rc = nvml_open(&p->nvml, err, errlen);
    if (rc < 0) {
        cuda_join(p);
        prefetch_join(p);
        free(p->pre_holders);
        free(p);
        return rc;
    }
    *out = p;
    return VRAM_OK;
}

void probe_close(struct probe *p)
{
    if (!p)
        return;
    cuda_join(p);
    prefetch_join(p);
    pcie_free(p->pcie);
    for (unsigned i = 0; p->act && i < nvml_count(p->nvml); i++)
        activity_free(&p->act[i]);
    free(p->act);
    cpuuse_free(&p->cpu);
    nvml_close(p->nvml);
    free(p->holders);
    free(p->pre_holders);
    free(p);
}

void probe_exiting(struct probe *p)
{
    nvml_skip_shutdown(p->nvml);
}

void probe_ending(struct probe *p)
{
    nvml_ending(p->nvml);
}

static int host_lookup(void *ctx, struct snap_proc *proc)
{
    return hostproc_fill(&((struct probe *)ctx)->host, proc);
}

static int driver_lookup(void *ctx, uint32_t pid, char *buf, size_t len)
{
    return nvml_proc_name(((struct probe *)ctx)->nvml, pid, buf, len);
}

/* Processes holding /dev/nvidiaN that no NVML list names: shown with their
 * memory "n/a", as `fuser` would show them. */
static int add_holders(struct probe *p, struct snap *s)
{
    uint32_t self = (uint32_t)getpid();
    for (size_t gi = 0; gi < s->ngpus; gi++) {
        struct snap_gpu *g = &s->gpus[gi];
        for (int k = 0; k < p->nholders; k++) {
            const struct hostproc_holder *h = &p->holders[k];
            if (h->pid == self || g->minor >= 64 || !(h->minors & (1ULL << g->minor)))
                continue;
            bool listed = false;
            for (size_t i = 0; i < g->nprocs && !listed; i++)
                listed = g->procs[i].pid == h->pid;
            if (listed)
                continue;
            struct snap_proc *v = realloc(g->procs, (g->nprocs + 1) * sizeof *v);
            if (!v)
                return VRAM_EFAIL;
            g->procs = v;
            struct snap_proc *np = &g->procs[g->nprocs];
            memset(np, 0, sizeof *np);
            np->pid = h->pid;
            np->types = SNAP_PT_FD;
            if (hostproc_fill(&p->host, np) < 0)
                continue;
            np->role = role_of(np->name, np->types);
            g->nprocs++;
        }
    }
    return VRAM_OK;
}

/* Caps and counts of processes under `vram run`, from every user's group
 * files: read without a lock, and only for processes of each file's owner
 * (ipc/slices.c), so no file can block a sample or label someone else's
 * process. */
static int apply_group(const struct slice *sl, void *arg)
{
    struct snap *s = arg;
    const struct group_view *v = &sl->v;
    for (unsigned m = 0; m < v->nmembers; m++)
        for (size_t gi = 0; gi < s->ngpus; gi++) {
            /* a process over several GPUs has a group on each */
            if (v->gpu_uuid[0] && strcmp(v->gpu_uuid, s->gpus[gi].uuid) != 0)
                continue;
            for (size_t i = 0; i < s->gpus[gi].nprocs; i++) {
                struct snap_proc *pr = &s->gpus[gi].procs[i];
                if (pr->pid != (uint32_t)v->members[m].pid)
                    continue;
                pr->cap = v->cap == UINT64_MAX ? 0 : v->cap;
                pr->counted = v->members[m].used;
            }
        }
    return 0;
}

/* The CUDA driver's version, read once: the cache's, for this driver;
 * else libcuda's own answer (loaded on a thread by probe_open_ahead, else
 * here), else NVML's; a new answer is cached. */
static int cuda_version(struct probe *p, const char *driver)
{
    if (p->cuda_read)
        return p->cuda_version;
    p->cuda_read = true;
    if (!p->cache_read)
        read_cache(p);
    if (p->cached_cuda && !strcmp(p->cached_driver, driver))
        return p->cuda_version = p->cached_cuda;
    if (p->cuda_running)
        cuda_join(p);
    else
        p->cuda_version = cudaver_read();
    if (!p->cuda_version)
        p->cuda_version = nvml_cuda_version(p->nvml);
    char text[96];
    if (p->cuda_version && strcmp(driver, "n/a")) {
        snprintf(text, sizeof text, "%s %d\n", driver, p->cuda_version);
        usercache_write(CUDA_CACHE, text);
    }
    return p->cuda_version;
}

/* A process list of GPU i, joined with what the host knows of each. */
static void read_procs(struct probe *p, unsigned i, struct snap_gpu *g)
{
    struct snap_proc *procs = NULL;
    size_t n = 0;
    free(g->procs);
    g->procs = NULL;
    g->nprocs = 0;
    g->have &= ~(unsigned)SNAP_HAVE_PROCS;
    if (nvml_procs(p->nvml, i, g->mem.total, &procs, &n) == VRAM_OK) {
        g->procs = procs;
        g->nprocs = n;
        g->have |= SNAP_HAVE_PROCS;
        join_procs(g, &(struct join_lookup){host_lookup, driver_lookup, p});
    }
}

/* The /proc scan: the one a thread ran (probe_open_ahead's, or the last
 * PROBE_HOLDERS_BG's), else a new one here. With wait false, only a scan
 * that has finished is taken, and one is started if none runs. Whether
 * p->holders is new. */
static bool read_holders(struct probe *p, bool wait)
{
    if (p->prefetching) {
        if (!wait && !__atomic_load_n(&p->pre_done, __ATOMIC_ACQUIRE))
            return false; /* still scanning: the last result stands */
        prefetch_join(p);
    } else if (!wait && start_scan(p)) {
        return false;
    }
    free(p->holders);
    p->holders = NULL;
    if (p->pre_done) {
        p->holders = p->pre_holders;
        p->nholders = p->pre_n;
        p->pre_holders = NULL;
        p->pre_done = false;
    } else {
        p->nholders = hostproc_nvidia_holders(&p->host, &p->holders);
    }
    if (p->nholders < 0)
        p->nholders = 0; /* no /proc to scan: the NVML view stands alone */
    return true;
}

int probe_sample(struct probe *p, struct snap *s, unsigned what, uint64_t now_ms)
{
    unsigned count = nvml_count(p->nvml);
    bool first = !s->gpus || s->ngpus != count;
    if (first) {
        snap_free(s);
        s->gpus = calloc(count ? count : 1, sizeof *s->gpus);
        if (!s->gpus)
            return VRAM_EFAIL;
        s->ngpus = count;
        if (!p->act && !(p->act = calloc(count ? count : 1, sizeof *p->act)))
            return VRAM_EFAIL;
        what |= PROBE_PROCS | (what & PROBE_LEAN ? 0 : PROBE_SLOW);
    }
    if (first) {
        nvml_system(p->nvml, s);
        for (unsigned i = 0; i < count; i++)
            nvml_static(p->nvml, i, &s->gpus[i]);
    }
    /* the slow tier first, on its threads, the rest meanwhile here; the
     * max clocks from the user's cache when it knows every GPU's */
    unsigned parts = what & PROBE_SLOW   ? (1u << NVML_PARTS) - 1
                     : what & PROBE_LEAN ? 1u << NVML_PART_DRIVER_MODEL
                                         : 0;
    const unsigned clocks = 1u << NVML_PART_MAX_CLOCKS;
    if ((parts & clocks) && clockcache_fill(s))
        parts &= ~clocks;
    struct slowcalls *slow = slowcalls_start(p->nvml, s, parts);
    if (what & PROBE_CUDA)
        cuda_version(p, s->driver_version);
    s->cuda_version = p->cuda_version; /* 0 until some sample asks */
    s->taken_ms = now_ms;
    if (what & PROBE_PCIE) {
        if (!p->pcie)
            p->pcie = pcie_new(p->nvml);
        pcie_ask(p->pcie);
    }
    for (unsigned i = 0; i < count; i++) {
        struct snap_gpu *g = &s->gpus[i];
        nvml_memory(p->nvml, i, g);
        if (!(what & PROBE_LEAN))
            nvml_gauges(p->nvml, i, g);
        if (what & PROBE_ACTIVITY)
            activity_watch(&p->act[i], p->nvml, i);
        if (what & PROBE_METERS)
            nvml_meters(p->nvml, i, g);
        if (what & PROBE_ENERGY)
            nvml_energy(p->nvml, i, g);
        if (what & PROBE_PROCS)
            read_procs(p, i, g);
        if (what & (PROBE_PROCS | PROBE_ACTIVITY))
            activity_apply(&p->act[i], g, (what & PROBE_PROCS) && (g->have & SNAP_HAVE_PROCS),
                           now_ms * 1000);
    }
    pcie_apply(p->pcie, s);
    bool fresh = false;
    if (what & (PROBE_HOLDERS | PROBE_HOLDERS_BG))
        fresh = read_holders(p, (what & PROBE_HOLDERS) != 0);
    int rc = VRAM_OK;
    if ((what & PROBE_PROCS) || fresh)
        rc = add_holders(p, s);
    size_t procs = 0;
    for (size_t i = 0; i < s->ngpus; i++)
        procs += s->gpus[i].nprocs;
    if ((what & PROBE_PROCS) && procs) { /* no process: no slice to read, no CPU to count */
        slices_each(false, apply_group, s);
        cpuuse_apply(&p->cpu, s, now_ms);
    }
    slowcalls_finish(slow);
    if (parts & clocks)
        clockcache_save(s);
    return rc;
}

int probe_host(struct probe *p, struct snap_proc *out)
{
    return hostproc_fill(&p->host, out);
}

int probe_detail(struct probe *p, uint32_t pid, struct probe_detail *d)
{
    return hostproc_detail(&p->host, pid, d->cmdline, sizeof d->cmdline, d->cgroup,
                           sizeof d->cgroup);
}
