/* winprobe: one snapshot of a Windows machine.
 *
 * NVML gives the GPUs and the processes that use them; the process table
 * names them (or, for a process gone since, NVML's own name for it, as on
 * Linux: core/join.c). Under WDDM NVML gives each process "not available"
 * as its memory: the GPU Process Memory counters give it instead, joined by
 * pid under the adapter whose processes are NVML's (core/wddm.c). There is
 * no /proc, no device file to scan and no `vram run` on Windows: what
 * PROBE_HOLDERS asks for does not exist here. */
#include "win/winprobe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/join.h"
#include "core/wddm.h"
#include "gpu/nvml.h"
#include "probe/activity.h"
#include "probe/pcie.h"
#include "win/winpdh.h"
#include "win/winproc.h"

struct probe {
    struct nvml *nvml;
    struct winproc_table table;
    struct activity *act;
    struct wddm_set *wddm;
    struct pcie *pcie;
    int cuda_version;
    bool cuda_read;
    char counters_why[160];
};

int probe_open(struct probe **out, const char *procroot, char *err, size_t errlen)
{
    return probe_open_ahead(out, procroot, 0, err, errlen);
}

/* Nothing to do ahead here: no /proc to scan, and NVML itself answers the
 * CUDA version (nvcuda.dll), when a sample asks. */
int probe_open_ahead(struct probe **out, const char *procroot, unsigned ahead, char *err,
                     size_t errlen)
{
    (void)procroot; /* Windows has none: its commands offer no --proc-root */
    (void)ahead;
    struct probe *p = calloc(1, sizeof *p);
    int rc = p ? nvml_open(&p->nvml, err, errlen) : VRAM_EFAIL;
    if (rc < 0) {
        free(p);
        p = NULL;
    }
    *out = p;
    return rc < 0 ? rc : VRAM_OK;
}

void probe_close(struct probe *p)
{
    if (!p)
        return;
    pcie_free(p->pcie);
    for (unsigned i = 0; p->act && i < nvml_count(p->nvml); i++)
        activity_free(&p->act[i]);
    free(p->act);
    free(p->wddm);
    winproc_free(&p->table);
    nvml_close(p->nvml);
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

const char *winprobe_counters_why(const struct probe *p)
{
    return p->counters_why;
}

static int host_lookup(void *ctx, struct snap_proc *proc)
{
    return winproc_fill(&((struct probe *)ctx)->table, proc);
}

static int driver_lookup(void *ctx, uint32_t pid, char *buf, size_t len)
{
    return nvml_proc_name(((struct probe *)ctx)->nvml, pid, buf, len);
}

/* The figures WDDM kept from NVML, from the counters; read once a sample,
 * and only when some process lacks one. */
static void fill_hidden(struct probe *p, struct snap *s)
{
    p->counters_why[0] = '\0';
    bool need = false;
    for (size_t i = 0; i < s->ngpus && !need; i++)
        for (size_t k = 0; k < s->gpus[i].nprocs && !need; k++)
            need = !s->gpus[i].procs[k].used_known;
    if (!need)
        return;
    if (!p->wddm && !(p->wddm = malloc(sizeof *p->wddm))) {
        snprintf(p->counters_why, sizeof p->counters_why, "out of memory");
        return;
    }
    if (winpdh_read(p->wddm, p->counters_why, sizeof p->counters_why) < 0)
        return;
    for (size_t i = 0; i < s->ngpus; i++) {
        struct snap_gpu *g = &s->gpus[i];
        uint64_t luid = wddm_luid_of(g, p->wddm);
        if (!luid && g->nprocs)
            snprintf(p->counters_why, sizeof p->counters_why,
                     "the GPU counters name none of GPU %u's processes", g->index);
        wddm_apply(g, p->wddm, luid);
    }
}

int probe_sample(struct probe *p, struct snap *s, unsigned what, uint64_t now_ms)
{
    unsigned count = nvml_count(p->nvml);
    if (!s->gpus || s->ngpus != count) {
        snap_free(s);
        s->gpus = calloc(count ? count : 1, sizeof *s->gpus);
        if (!s->gpus)
            return VRAM_EFAIL;
        s->ngpus = count;
        if (!p->act && !(p->act = calloc(count ? count : 1, sizeof *p->act)))
            return VRAM_EFAIL;
        nvml_system(p->nvml, s);
        for (unsigned i = 0; i < count; i++)
            nvml_static(p->nvml, i, &s->gpus[i]);
        what |= PROBE_PROCS | (what & PROBE_LEAN ? 0 : PROBE_SLOW);
    }
    if ((what & PROBE_CUDA) && !p->cuda_read) {
        p->cuda_version = nvml_cuda_version(p->nvml);
        p->cuda_read = true;
    }
    s->cuda_version = p->cuda_version;
    s->taken_ms = now_ms;
    if (what & PROBE_PROCS)
        winproc_scan(&p->table); /* none: every process is named by NVML, or dropped */
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
        if (what & PROBE_SLOW) {
            nvml_slow(p->nvml, i, g);
        } else if (what & PROBE_LEAN) {
            unsigned have = nvml_slow_part(p->nvml, i, NVML_PART_DRIVER_MODEL, g);
            g->have = (g->have & ~nvml_part_have(NVML_PART_DRIVER_MODEL)) | have;
        }
        if (what & PROBE_METERS)
            nvml_meters(p->nvml, i, g);
        if (what & PROBE_ENERGY)
            nvml_energy(p->nvml, i, g);
        if (what & PROBE_PROCS) {
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
        if (what & (PROBE_PROCS | PROBE_ACTIVITY))
            activity_apply(&p->act[i], g, (what & PROBE_PROCS) && (g->have & SNAP_HAVE_PROCS),
                           now_ms * 1000);
    }
    pcie_apply(p->pcie, s);
    if (what & PROBE_PROCS)
        fill_hidden(p, s);
    return VRAM_OK;
}

int probe_host(struct probe *p, struct snap_proc *out)
{
    return winproc_fill(&p->table, out);
}

/* Windows keeps no cgroups; the image's full path stands for the command
 * line (what the process table gives). */
int probe_detail(struct probe *p, uint32_t pid, struct probe_detail *d)
{
    struct snap_proc sp = {.pid = pid};
    d->cmdline[0] = d->cgroup[0] = '\0';
    if (winproc_fill(&p->table, &sp) < 0)
        return -1;
    snprintf(d->cmdline, sizeof d->cmdline, "%s", sp.cmdline[0] ? sp.cmdline : sp.name);
    return 0;
}
