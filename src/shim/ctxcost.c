/* ctxcost: a first context's footprint, measured around its making.
 *
 * Two figures. The drop in the GPU's free memory across the making is what
 * the process itself sees, in any PID namespace; it is one quick query, so
 * the context is charged with it at once, however slow NVML's process
 * list is to answer. Others may allocate or free on the GPU meanwhile: the
 * group's own members are accounted for (what they gave back is added
 * back); what a stranger frees in those few milliseconds is not, which is
 * why NVML's own figure for the process, where NVML names it, is asked
 * for next, and the larger of the two stands. NVML is opened before the
 * context is made, so that its start-up, the slow part, charges nothing
 * late. */
#include "shim/ctxcost.h"

#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

#include "gpu/nvproc.h"
#include "shim/budget.h"
#include "shim/driver.h"

#define MAX_PROCS 256

static uint64_t group_used(const struct group *g)
{
    return g && g->sh ? __atomic_load_n(&g->sh->used, __ATOMIC_RELAXED) : 0;
}

void ctxcost_begin(struct ctxcost *c, CUdevice dev, const struct group *g)
{
    memset(c, 0, sizeof *c);
    char uuid[96];
    if (budget_device_uuid(dev, uuid, sizeof uuid) < 0)
        return;
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    nvmlReturn_t (*init)(void) = (nvmlReturn_t(*)(void))driver_lookup(h, "nvmlInit_v2");
    nvmlReturn_t (*by_uuid)(const char *, nvmlDevice_t *) =
        (nvmlReturn_t(*)(const char *, nvmlDevice_t *))driver_lookup(h,
                                                                     "nvmlDeviceGetHandleByUUID");
    c->fini = (nvmlReturn_t(*)(void))driver_lookup(h, "nvmlShutdown");
    /* the library's own, not libvramcap's view of it (view.c) */
    c->meminfo = (nvmlReturn_t(*)(nvmlDevice_t, nvmlMemory_v1_t *))driver_lookup(
        h, "nvmlDeviceGetMemoryInfo");
    c->procs = (nvml_proclist_fn)driver_lookup(h, "nvmlDeviceGetComputeRunningProcesses_v3");
    if (!init || !by_uuid || !c->fini || init() != NVML_SUCCESS) {
        dlclose(h);
        return;
    }
    c->lib = h;
    if (by_uuid(uuid, &c->dev) != NVML_SUCCESS) {
        ctxcost_end(c);
        return;
    }
    nvmlMemory_v1_t m;
    c->group0 = group_used(g);
    if (c->meminfo && c->meminfo(c->dev, &m) == NVML_SUCCESS) {
        c->free0 = m.free;
        c->before_known = true;
    }
}

uint64_t ctxcost_quick(struct ctxcost *c, const struct group *g)
{
    nvmlMemory_v1_t m;
    if (!c->lib || !c->before_known || c->meminfo(c->dev, &m) != NVML_SUCCESS)
        return 0;
    int64_t dropped = (int64_t)c->free0 - (int64_t)m.free;
    /* the members' own change meanwhile: a free of theirs made the drop
     * look smaller by its size; an allocation made it look larger, which
     * only overcharges */
    int64_t theirs = (int64_t)group_used(g) - (int64_t)c->group0;
    int64_t cost = theirs < 0 ? dropped - theirs : dropped;
    return cost > 0 ? (uint64_t)cost : 0;
}

bool ctxcost_named(struct ctxcost *c, uint64_t *bytes)
{
    if (!c->lib || !c->procs)
        return false;
    unsigned char buf[MAX_PROCS * NVPROC_MAX_STRIDE];
    memset(buf, NVPROC_SENTINEL, sizeof buf);
    unsigned n = MAX_PROCS;
    if (c->procs(c->dev, &n, buf) != NVML_SUCCESS)
        return false;
    struct nvproc_entry e[MAX_PROCS];
    size_t stride = nvproc_stride(buf, n, sizeof(nvmlProcessInfo_v2_t));
    unsigned k = nvproc_decode(buf, n < MAX_PROCS ? n : MAX_PROCS, stride, 0, e, NULL);
    for (unsigned i = 0; i < k; i++)
        if (e[i].pid == (uint32_t)getpid() && e[i].used_known) {
            *bytes = e[i].used;
            return true;
        }
    return false;
}

void ctxcost_end(struct ctxcost *c)
{
    if (c->lib) {
        c->fini();
        dlclose(c->lib);
    }
    c->lib = NULL;
}
