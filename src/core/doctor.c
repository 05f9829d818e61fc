/* doctor: what is wasting a machine's VRAM. Each rule looks at one thing
 * and, when it finds something, says what it costs and what to do; the
 * rules never change anything themselves (reclaim and headless do, when
 * asked). Unattributed memory below 256 MiB and idle power below 30% of the
 * limit are normal and not reported. */
#include "core/doctor.h"

#include <stdio.h>
#include <string.h>

#include "core/acct.h"
#include "core/units.h"

#define UNATTRIBUTED_MIN (256ULL << 20)

const char *doctor_kind_name(enum doc_kind k)
{
    static const char *const names[] = {"display", "reserved",   "unattributed", "zombie",
                                        "stopped", "idle_power", "persistence",  "compute_mode",
                                        "mig",     "mps",        "idle",
                                        "gpu_scheduling"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

bool doctor_idle(const struct snap_gpu *g, const struct snap_proc *p, uint64_t now_ms,
                 double seconds)
{
    if (!(g->have & SNAP_HAVE_ACTIVITY) || !p->host_known || !p->start_time || seconds <= 0)
        return false;
    uint64_t span_ms = (uint64_t)(seconds * 1000);
    if (p->start_time * 1000 + span_ms > now_ms)
        return false; /* too young to tell */
    return p->busy_us / 1000 + span_ms <= now_ms;
}

struct out {
    struct doc_finding *v;
    size_t n, max;
};

static struct doc_finding *add(struct out *o, enum doc_kind k, enum doc_level l, int gpu,
                               uint32_t pid, uint64_t bytes)
{
    if (o->n >= o->max) {
        o->n++;
        return NULL;
    }
    struct doc_finding *f = &o->v[o->n++];
    memset(f, 0, sizeof *f);
    f->kind = k;
    f->level = l;
    f->gpu = gpu;
    f->pid = pid;
    f->bytes = bytes;
    return f;
}

static void gpu_rules(struct out *o, const struct snap_gpu *g, const struct doc_host *h)
{
    struct acct a;
    acct_gpu(g, &a);
    int i = (int)g->index;
    char b[32];
    struct doc_finding *f;
    if (a.display) {
        char names[120] = "";
        size_t at = 0;
        for (size_t k = 0; k < g->nprocs && at < sizeof names - 1; k++)
            if (g->procs[k].role == SNAP_ROLE_DISPLAY)
                at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", at ? ", " : "",
                                       g->procs[k].name);
        if ((f = add(o, DOC_DISPLAY, DOC_WARN, i, 0, a.display))) {
            snprintf(f->what, sizeof f->what, "the desktop holds %s (%s)",
                     units_fmt_size(a.display, b, sizeof b), names);
            if (h->igpu)
                snprintf(f->fix, sizeof f->fix,
                         "move the display to %s: vram headless on (then log in again)",
                         h->igpu_name);
            else
                snprintf(f->fix, sizeof f->fix,
                         "no other GPU can drive a display here: run without a desktop, or "
                         "plug the monitor into another card");
        }
    }
    if (!a.reserved_unknown && a.reserved &&
        (f = add(o, DOC_RESERVED, DOC_INFO, i, 0, a.reserved))) {
        snprintf(f->what, sizeof f->what, "the driver reserves %s",
                 units_fmt_size(a.reserved, b, sizeof b));
        snprintf(f->fix, sizeof f->fix, "nothing to do: the driver needs it");
    }
    if (a.unattributed >= UNATTRIBUTED_MIN &&
        (f = add(o, DOC_UNATTRIBUTED, DOC_WARN, i, 0, a.unattributed))) {
        snprintf(f->what, sizeof f->what, "%s is used by no process you can see",
                 units_fmt_size(a.unattributed, b, sizeof b));
        snprintf(f->fix, sizeof f->fix,
                 "run vram doctor as root to see other users' processes; check containers "
                 "(they may run in another PID namespace)");
    }
    for (size_t k = 0; k < g->nprocs; k++) {
        const struct snap_proc *p = &g->procs[k];
        bool zombie = p->state == SNAP_PS_ZOMBIE, stopped = p->state == SNAP_PS_STOPPED;
        if (!zombie && !stopped)
            continue;
        uint64_t held = p->used_known ? p->used : 0;
        if (!(f = add(o, zombie ? DOC_ZOMBIE : DOC_STOPPED, DOC_WARN, i, p->pid, held)))
            continue;
        if (p->model[0]) { /* the daemon's to stop, never reclaim's */
            snprintf(f->what, sizeof f->what, "model %s of vram serve (pid %u) is %s and holds %s",
                     p->model, p->pid, zombie ? "defunct" : "stopped",
                     p->used_known ? units_fmt_size(held, b, sizeof b) : "the device open");
            snprintf(f->fix, sizeof f->fix, "vram unload %s (vram reclaim leaves it to vram serve)",
                     p->model);
            continue;
        }
        snprintf(f->what, sizeof f->what, "pid %u (%s) is %s and holds %s", p->pid, p->name,
                 zombie ? "defunct" : "stopped",
                 p->used_known ? units_fmt_size(held, b, sizeof b) : "the device open");
        if (zombie)
            snprintf(f->fix, sizeof f->fix,
                     "vram reclaim --yes (kills its remaining threads; parent %u is told)",
                     p->ppid);
        else
            snprintf(f->fix, sizeof f->fix,
                     "vram reclaim --yes to stop it, or kill -CONT %u to "
                     "let it go on",
                     p->pid);
    }
    for (size_t k = 0; h->idle_s > 0 && k < g->nprocs; k++) {
        const struct snap_proc *p = &g->procs[k];
        if (p->role == SNAP_ROLE_DISPLAY || p->state == SNAP_PS_ZOMBIE ||
            p->state == SNAP_PS_STOPPED || !doctor_idle(g, p, h->now_ms, h->idle_s))
            continue;
        uint64_t held = p->used_known ? p->used : 0;
        /* a model of vram serve idle is the daemon's business: it gives the
         * memory back after the model's keep_alive */
        if (!(f = add(o, DOC_IDLE, p->model[0] ? DOC_INFO : DOC_WARN, i, p->pid, held)))
            continue;
        char d[32];
        if (p->model[0]) {
            snprintf(f->what, sizeof f->what,
                     "model %s of vram serve (pid %u) holds %s and did no GPU work for %s",
                     p->model, p->pid,
                     p->used_known ? units_fmt_size(held, b, sizeof b) : "the device open",
                     units_fmt_duration(h->idle_s, d, sizeof d));
            snprintf(f->fix, sizeof f->fix,
                     "nothing to do: vram serve gives it back after its keep_alive; vram unload "
                     "%s frees it now",
                     p->model);
            continue;
        }
        snprintf(f->what, sizeof f->what, "pid %u (%s) holds %s and did no GPU work for %s", p->pid,
                 p->name, p->used_known ? units_fmt_size(held, b, sizeof b) : "the device open",
                 units_fmt_duration(h->idle_s, d, sizeof d));
        snprintf(f->fix, sizeof f->fix, "vram reclaim --idle %s --match %s (dry run first)",
                 units_fmt_duration(h->idle_s, d, sizeof d), p->name);
    }
    bool busy = a.workloads > 0 || ((g->have & SNAP_HAVE_UTIL) && g->util_gpu > 0);
    if (!busy && (g->have & SNAP_HAVE_POWER) && (g->have & SNAP_HAVE_POWER_LIMIT) &&
        g->power_limit_mw && g->power_mw * 10 > g->power_limit_mw * 3 &&
        (f = add(o, DOC_IDLE_POWER, DOC_WARN, i, 0, 0))) {
        snprintf(f->what, sizeof f->what, "draws %u W with nothing running (limit %u W)",
                 g->power_mw / 1000, g->power_limit_mw / 1000);
        snprintf(f->fix, sizeof f->fix,
                 "look for a stuck context or a monitor at a high refresh "
                 "rate; vram does not change power settings");
    }
    if ((g->have & SNAP_HAVE_PERSISTENCE) && !g->persistence &&
        (f = add(o, DOC_PERSISTENCE, DOC_INFO, i, 0, 0))) {
        snprintf(f->what, sizeof f->what,
                 "persistence mode is off: every first CUDA call pays "
                 "the driver's start and the clocks are reset between jobs");
        snprintf(f->fix, sizeof f->fix, "run nvidia-persistenced (or sudo nvidia-smi -pm 1)");
    }
    if ((g->have & SNAP_HAVE_COMPUTE_MODE) && g->compute_mode != 0 &&
        (f = add(o, DOC_COMPUTE_MODE, DOC_INFO, i, 0, 0))) {
        snprintf(f->what, sizeof f->what, "compute mode is %s: %s",
                 g->compute_mode == 2 ? "prohibited" : "exclusive",
                 g->compute_mode == 2 ? "no CUDA process can start"
                                      : "only one process at a time can use it");
        snprintf(f->fix, sizeof f->fix, "sudo nvidia-smi -c DEFAULT, if that is not intended");
    }
    if ((g->have & SNAP_HAVE_MIG) && g->mig && (f = add(o, DOC_MIG, DOC_INFO, i, 0, 0))) {
        snprintf(f->what, sizeof f->what, "MIG is on: the GPU is split into instances");
        snprintf(f->fix, sizeof f->fix, "nothing to do if intended; vram counts the whole GPU");
    }
}

size_t doctor_examine(const struct snap *s, const struct doc_host *h, struct doc_finding *v,
                      size_t max)
{
    struct out o = {v, 0, max};
    for (size_t i = 0; i < s->ngpus; i++)
        gpu_rules(&o, &s->gpus[i], h);
    struct doc_finding *f;
    if (h->mps_pid && (f = add(&o, DOC_MPS, DOC_INFO, -1, h->mps_pid, 0))) {
        snprintf(f->what, sizeof f->what, "an MPS control daemon runs (pid %u)", h->mps_pid);
        snprintf(f->fix, sizeof f->fix, "echo quit | nvidia-cuda-mps-control, if not needed");
    }
    return o.n < max ? o.n : max;
}
