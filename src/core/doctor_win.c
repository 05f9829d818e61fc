/* doctor_win: what wastes VRAM on a Windows desktop, and how to get it back
 * there.
 *
 * The rules that hold everywhere are doctor.c's; their fixes name Linux
 * commands (vram reclaim, kill, nvidia-persistenced), so each is said again
 * here the Windows way. Then what the seed's user fixed by hand: the
 * desktop's share on this card (and that `vram headless on` gives it back
 * once the monitor is on the motherboard), hardware-accelerated GPU
 * scheduling, and the leftover of a training run: a compute process that
 * holds memory while the GPU does no work. */
#include "core/doctor_win.h"

#include <stdio.h>
#include <string.h>

#include "core/acct.h"
#include "core/units.h"

/* Some process of GPU i has no figure at all: WDDM hid it, and no counter
 * gave one. */
static bool hidden(const struct snap *s, int i)
{
    if (i < 0 || (size_t)i >= s->ngpus)
        return false;
    const struct snap_gpu *g = &s->gpus[i];
    for (size_t k = 0; k < g->nprocs; k++)
        if (!g->procs[k].used_known)
            return true;
    return false;
}

static void rewrite(struct doc_finding *f, const struct snap *s, const struct doc_win *w)
{
    char b[32];
    switch (f->kind) {
    case DOC_DISPLAY:
        if (w->igpu)
            snprintf(f->fix, sizeof f->fix,
                     "plug the monitor into the motherboard (%s), then vram headless on: "
                     "gives back about %s after a restart",
                     w->igpu_name, units_fmt_size(f->bytes, b, sizeof b));
        else
            snprintf(f->fix, sizeof f->fix,
                     "no other display adapter here: plug the monitor into another card "
                     "(an integrated GPU enabled in the firmware settings), then vram "
                     "headless on");
        break;
    case DOC_UNATTRIBUTED:
        if (hidden(s, f->gpu))
            snprintf(f->fix, sizeof f->fix,
                     "WDDM gives no per-process figures and Windows' GPU counters gave none "
                     "here: Task Manager's Details tab (Dedicated GPU memory) shows them");
        else
            snprintf(f->fix, sizeof f->fix,
                     "run vram doctor as Administrator to see every user's processes; the rest "
                     "is held by Windows itself (WDDM)");
        break;
    case DOC_IDLE:
        snprintf(f->fix, sizeof f->fix, "if it is finished: taskkill /PID %u (add /F if it "
                 "does not exit)", f->pid);
        break;
    case DOC_COMPUTE_MODE:
        snprintf(f->fix, sizeof f->fix,
                 "nvidia-smi -c DEFAULT in an Administrator prompt, if that is not intended");
        break;
    default:
        break;
    }
}

/* Not Windows findings: a defunct or stopped process (Windows has neither),
 * persistence mode and MPS (Linux settings). */
static bool linux_only(enum doc_kind k)
{
    return k == DOC_ZOMBIE || k == DOC_STOPPED || k == DOC_PERSISTENCE || k == DOC_MPS;
}

static struct doc_finding *add(struct doc_finding *out, size_t *n, size_t max, enum doc_kind k,
                               enum doc_level l, int gpu, uint32_t pid, uint64_t bytes)
{
    if (*n >= max)
        return NULL;
    struct doc_finding *f = &out[(*n)++];
    memset(f, 0, sizeof *f);
    f->kind = k, f->level = l, f->gpu = gpu, f->pid = pid, f->bytes = bytes;
    return f;
}

/* A compute process holding memory while its GPU is at 0%: what a finished
 * training run leaves when its Python (or notebook kernel) stays open. One
 * sample cannot say "for how long": --idle watches; this says "right now". */
static void leftovers(const struct snap_gpu *g, const struct doc_host *h, struct doc_finding *out,
                      size_t *n, size_t max)
{
    if (h->idle_s > 0 || !(g->have & SNAP_HAVE_UTIL) || g->util_gpu > 0)
        return;
    char b[32];
    for (size_t k = 0; k < g->nprocs; k++) {
        const struct snap_proc *p = &g->procs[k];
        if (p->role != SNAP_ROLE_WORKLOAD || !p->used_known || p->used == 0)
            continue;
        struct doc_finding *f = add(out, n, max, DOC_IDLE, DOC_WARN, (int)g->index, p->pid, p->used);
        if (!f)
            return;
        snprintf(f->what, sizeof f->what, "pid %u (%s) holds %s while the GPU does no work (0%%)",
                 p->pid, p->name, units_fmt_size(p->used, b, sizeof b));
        snprintf(f->fix, sizeof f->fix,
                 "if it is finished: taskkill /PID %u (add /F if it does not exit)", p->pid);
    }
}

size_t doctor_win_examine(const struct snap *s, const struct doc_host *h, const struct doc_win *w,
                          struct doc_finding *out, size_t max)
{
    struct doc_host hw = *h;
    hw.mps_pid = 0;
    hw.igpu = w->igpu;
    snprintf(hw.igpu_name, sizeof hw.igpu_name, "%s", w->igpu_name);
    size_t got = doctor_examine(s, &hw, out, max), n = 0;
    for (size_t i = 0; i < got; i++) {
        if (linux_only(out[i].kind))
            continue;
        out[n] = out[i];
        rewrite(&out[n], s, w);
        n++;
    }
    for (size_t i = 0; i < s->ngpus; i++)
        leftovers(&s->gpus[i], h, out, &n, max);
    /* what the seed's switch set first: with the desktop on an NVIDIA card,
     * Windows schedules its memory itself unless this is on */
    bool nvidia_display = false;
    for (size_t i = 0; i < s->ngpus; i++) {
        const struct snap_gpu *g = &s->gpus[i];
        nvidia_display |= (g->have & SNAP_HAVE_DISPLAY) && g->display_active;
    }
    struct doc_finding *f;
    if (w->hwsch_known && w->hwsch != 2 && !w->headless_on &&
        (f = add(out, &n, max, DOC_GPU_SCHEDULING, DOC_INFO, -1, 0, 0))) {
        snprintf(f->what, sizeof f->what,
                 "hardware-accelerated GPU scheduling is %s%s",
                 w->hwsch < 0 ? "not set (Windows' default)" : w->hwsch == 1 ? "off (HwSchMode 1)"
                                                                             : "in an unknown state",
                 nvidia_display ? ", and the desktop draws on the NVIDIA card" : "");
        snprintf(f->fix, sizeof f->fix,
                 "vram headless on sets HwSchMode = 2 (in an Administrator prompt; restart after)");
    }
    return n;
}
