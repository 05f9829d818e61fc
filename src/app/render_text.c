/* render_text: the "where did my VRAM go" report, for people. Each GPU gets
 * a header line and one line per part of the breakdown, naming the biggest
 * processes in that part. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/acct.h"
#include "core/role.h"
#include "core/units.h"
#include "app/render_text.h"

const char *render_ptype(unsigned t, char *buf, size_t len)
{
    if ((t & SNAP_PT_COMPUTE) && (t & SNAP_PT_GRAPHICS))
        snprintf(buf, len, "compute+graphics");
    else if (t & SNAP_PT_COMPUTE)
        snprintf(buf, len, "compute");
    else if (t & SNAP_PT_GRAPHICS)
        snprintf(buf, len, "graphics");
    else if (t & SNAP_PT_MPS)
        snprintf(buf, len, "mps");
    else
        snprintf(buf, len, "device-file");
    return buf;
}

const char *render_driver_model(enum snap_driver_model m)
{
    return m == SNAP_DM_WDDM ? "WDDM" : m == SNAP_DM_TCC ? "TCC" : "MCDM";
}

const char *render_pstate(enum snap_pstate st)
{
    switch (st) {
    case SNAP_PS_RUNNING:
        return "running";
    case SNAP_PS_SLEEPING:
        return "sleeping";
    case SNAP_PS_STOPPED:
        return "stopped";
    case SNAP_PS_ZOMBIE:
        return "zombie";
    default:
        return "unknown";
    }
}

static int by_used_desc(const void *a, const void *b)
{
    const struct snap_proc *x = *(struct snap_proc *const *)a;
    const struct snap_proc *y = *(struct snap_proc *const *)b;
    if (x->used != y->used)
        return x->used < y->used ? 1 : -1;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* "Xorg 1.10 GiB, gnome-shell 0.50 GiB, +2 more" for one role. */
static void names_of(FILE *out, const struct snap_gpu *g, enum snap_role role)
{
    const struct snap_proc **v = malloc((g->nprocs ? g->nprocs : 1) * sizeof *v);
    if (!v)
        return;
    size_t n = 0;
    for (size_t i = 0; i < g->nprocs; i++)
        if (g->procs[i].role == role)
            v[n++] = &g->procs[i];
    qsort(v, n, sizeof *v, by_used_desc);
    char b[32];
    for (size_t i = 0; i < n && i < 3; i++) {
        const struct snap_proc *p = v[i];
        fprintf(out, "%s%s %s%s", i ? ", " : "   ", p->name[0] ? p->name : "?",
                p->used_known ? units_fmt_gib(p->used, b, sizeof b) : "n/a",
                p->used_known ? " GiB" : "");
    }
    if (n > 3)
        fprintf(out, ", +%zu more", n - 3);
    free(v);
}

/* SGR codes; each part has the colour of its bar in vram top */
#define SGR_BOLD "\033[1m"
#define SGR_DIM "\033[2m"
#define SGR_RED "\033[31m"
#define SGR_GREEN "\033[32m"
#define SGR_YELLOW "\033[33m"
#define SGR_MAGENTA "\033[35m"
#define SGR_OFF "\033[0m"

struct pen {
    FILE *out;
    bool color;
};

static const char *ink(const struct pen *p, const char *sgr)
{
    return p->color ? sgr : "";
}

static void line(const struct pen *p, const char *label, const char *sgr, uint64_t v,
                 const struct snap_gpu *g, int role)
{
    char b[32];
    fprintf(p->out, "  %s%-18s%s %6s GiB", ink(p, sgr), label, ink(p, SGR_OFF),
            units_fmt_gib(v, b, sizeof b));
    if (role >= 0)
        names_of(p->out, g, (enum snap_role)role);
}

/* Windows: where WDDM kept the per-process figures from the driver, say
 * where they came from instead, or that there are none. */
static void wddm_notes(const struct pen *p, const struct snap_gpu *g)
{
    size_t counted = 0, hidden = 0;
    for (size_t i = 0; i < g->nprocs; i++) {
        counted += g->procs[i].used_wddm;
        hidden += !g->procs[i].used_known;
    }
    if (!(g->have & SNAP_HAVE_DRIVER_MODEL) || g->driver_model != SNAP_DM_WDDM)
        return;
    if (counted)
        fprintf(p->out,
                "  %snote:%s WDDM gives the driver no per-process figures: these are Windows' "
                "GPU counters (dedicated usage, as Task Manager shows)\n",
                ink(p, SGR_YELLOW), ink(p, SGR_OFF));
    if (hidden)
        fprintf(p->out,
                "  %snote:%s WDDM hides %zu process%s' memory from the driver and Windows' GPU "
                "counters gave none: n/a, counted in unattributed\n",
                ink(p, SGR_YELLOW), ink(p, SGR_OFF), hidden, hidden == 1 ? "" : "es");
}

static void gpu_text(const struct pen *p, const struct snap_gpu *g, bool verbose)
{
    FILE *out = p->out;
    char b1[32], b2[32], b3[32];
    struct acct a;
    acct_gpu(g, &a);
    fprintf(out, "%sGPU %u  %s", ink(p, SGR_BOLD), g->index, g->name);
    if (!(g->have & SNAP_HAVE_MEMORY)) {
        fprintf(out, "%s   memory n/a (the driver did not answer)\n", ink(p, SGR_OFF));
        return;
    }
    fprintf(out, "%s   %s   used %s   free %s", ink(p, SGR_OFF), units_fmt_size(a.total, b1, sizeof b1),
            units_fmt_size(acct_used(&a), b2, sizeof b2), units_fmt_size(a.free, b3, sizeof b3));
    if (g->have & SNAP_HAVE_POWER)
        fprintf(out, "   %u W", (g->power_mw + 500) / 1000);
    if (g->have & SNAP_HAVE_DISPLAY)
        fprintf(out, "   display: %s",
                g->display_active     ? "active"
                : g->display_attached ? "attached"
                                      : "none");
    if (g->have & SNAP_HAVE_DRIVER_MODEL)
        fprintf(out, "   %s", render_driver_model(g->driver_model));
    fputc('\n', out);

    if (a.reserved_unknown)
        fprintf(out, "  %s%-18s%s    n/a       (old driver: counted in unattributed)\n",
                ink(p, SGR_DIM), "driver reserved", ink(p, SGR_OFF));
    else
        line(p, "driver reserved", SGR_DIM, a.reserved, g, -1), fputc('\n', out);
    line(p, "desktop / display", SGR_MAGENTA, a.display, g, SNAP_ROLE_DISPLAY);
    fputc('\n', out);
    line(p, "workloads", SGR_GREEN, a.workloads, g, SNAP_ROLE_WORKLOAD);
    fputc('\n', out);
    if (a.other) {
        line(p, "other", SGR_YELLOW, a.other, g, SNAP_ROLE_OTHER);
        fputc('\n', out);
    }
    line(p, "unattributed", SGR_RED, a.unattributed, g, -1);
    fprintf(out, "   (used by no process this user can see)\n");
    if (a.inconsistent)
        fprintf(out,
                "  %snote:%s the driver's figures disagree (processes list %s, used is %s); "
                "parts were scaled to fit\n",
                ink(p, SGR_YELLOW), ink(p, SGR_OFF), units_fmt_size(a.listed, b1, sizeof b1),
                units_fmt_size(g->mem.used, b2, sizeof b2));
    if (!(g->have & SNAP_HAVE_PROCS))
        fprintf(out, "  %snote:%s the driver gave no process list (n/a)\n", ink(p, SGR_YELLOW),
                ink(p, SGR_OFF));
    wddm_notes(p, g);
    if (!verbose || g->nprocs == 0)
        return;
    fprintf(out, "  %s%8s %-10s %-9s %-16s %10s %-8s %s%s\n", ink(p, SGR_BOLD), "PID", "USER",
            "ROLE", "TYPE", "VRAM", "STATE", "COMMAND", ink(p, SGR_OFF));
    for (size_t i = 0; i < g->nprocs; i++) {
        const struct snap_proc *pr = &g->procs[i];
        char tb[32];
        char slice[64] = "";
        if (pr->cap) {
            char c1[16], c2[16];
            snprintf(slice, sizeof slice, "  [slice %s of %s GiB]",
                     units_fmt_gib(pr->counted, c1, sizeof c1),
                     units_fmt_gib(pr->cap, c2, sizeof c2));
        }
        char served[SNAP_NAME_MAX + 32] = "";
        if (pr->model[0])
            snprintf(served, sizeof served, "model %s of vram serve: ", pr->model);
        fprintf(out, "  %8" PRIu32 " %-10.10s %-9s %-16s %10s %-8s %s%s%s%s%s\n", pr->pid,
                pr->host_known ? pr->user : "?", role_name(pr->role),
                render_ptype(pr->types, tb, sizeof tb),
                pr->used_known ? units_fmt_size(pr->used, b1, sizeof b1) : "n/a",
                render_pstate(pr->state), served, pr->cmdline[0] ? pr->cmdline : pr->name,
                pr->container[0] ? "  in " : "", pr->container, slice);
    }
}

void render_text(FILE *out, const struct snap *s, unsigned flags)
{
    const struct pen pen = {out, (flags & RENDER_COLOR) != 0};
    if (s->ngpus == 0) {
        fprintf(out, "no NVIDIA GPU found (driver %s)\n", s->driver_version);
        return;
    }
    for (size_t i = 0; i < s->ngpus; i++) {
        if (i)
            fputc('\n', out);
        gpu_text(&pen, &s->gpus[i], (flags & RENDER_PROCS) != 0);
    }
}
