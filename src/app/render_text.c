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

static void line(FILE *out, const char *label, uint64_t v, const struct snap_gpu *g, int role)
{
    char b[32];
    fprintf(out, "  %-18s %6s GiB", label, units_fmt_gib(v, b, sizeof b));
    if (role >= 0)
        names_of(out, g, (enum snap_role)role);
}

static void gpu_text(FILE *out, const struct snap_gpu *g, bool verbose)
{
    char b1[32], b2[32], b3[32];
    struct acct a;
    acct_gpu(g, &a);
    fprintf(out, "GPU %u  %s", g->index, g->name);
    if (!(g->have & SNAP_HAVE_MEMORY)) {
        fprintf(out, "   memory n/a (the driver did not answer)\n");
        return;
    }
    fprintf(out, "   %s   used %s   free %s", units_fmt_size(a.total, b1, sizeof b1),
            units_fmt_size(acct_used(&a), b2, sizeof b2), units_fmt_size(a.free, b3, sizeof b3));
    if (g->have & SNAP_HAVE_POWER)
        fprintf(out, "   %u W", (g->power_mw + 500) / 1000);
    if (g->have & SNAP_HAVE_DISPLAY)
        fprintf(out, "   display: %s",
                g->display_active     ? "active"
                : g->display_attached ? "attached"
                                      : "none");
    fputc('\n', out);

    if (a.reserved_unknown)
        fprintf(out, "  %-18s    n/a       (old driver: counted in unattributed)\n",
                "driver reserved");
    else
        line(out, "driver reserved", a.reserved, g, -1), fputc('\n', out);
    line(out, "desktop / display", a.display, g, SNAP_ROLE_DISPLAY);
    fputc('\n', out);
    line(out, "workloads", a.workloads, g, SNAP_ROLE_WORKLOAD);
    fputc('\n', out);
    if (a.other) {
        line(out, "other", a.other, g, SNAP_ROLE_OTHER);
        fputc('\n', out);
    }
    line(out, "unattributed", a.unattributed, g, -1);
    fprintf(out, "   (used by no process this user can see)\n");
    if (a.inconsistent)
        fprintf(out,
                "  note: the driver's figures disagree (processes list %s, used is %s); "
                "parts were scaled to fit\n",
                units_fmt_size(a.listed, b1, sizeof b1),
                units_fmt_size(g->mem.used, b2, sizeof b2));
    if (!(g->have & SNAP_HAVE_PROCS))
        fprintf(out, "  note: the driver gave no process list (n/a)\n");
    if (!verbose || g->nprocs == 0)
        return;
    fprintf(out, "  %8s %-10s %-9s %-16s %10s %-8s %s\n", "PID", "USER", "ROLE", "TYPE", "VRAM",
            "STATE", "COMMAND");
    for (size_t i = 0; i < g->nprocs; i++) {
        const struct snap_proc *p = &g->procs[i];
        char tb[32];
        char slice[64] = "";
        if (p->cap) {
            char c1[16], c2[16];
            snprintf(slice, sizeof slice, "  [slice %s of %s GiB]",
                     units_fmt_gib(p->counted, c1, sizeof c1),
                     units_fmt_gib(p->cap, c2, sizeof c2));
        }
        fprintf(out, "  %8" PRIu32 " %-10.10s %-9s %-16s %10s %-8s %s%s%s%s\n", p->pid,
                p->host_known ? p->user : "?", role_name(p->role),
                render_ptype(p->types, tb, sizeof tb),
                p->used_known ? units_fmt_size(p->used, b1, sizeof b1) : "n/a",
                render_pstate(p->state), p->cmdline[0] ? p->cmdline : p->name,
                p->container[0] ? "  in " : "", p->container, slice);
    }
}

void render_text(FILE *out, const struct snap *s, bool verbose)
{
    if (s->ngpus == 0) {
        fprintf(out, "no NVIDIA GPU found (driver %s)\n", s->driver_version);
        return;
    }
    for (size_t i = 0; i < s->ngpus; i++) {
        if (i)
            fputc('\n', out);
        gpu_text(out, &s->gpus[i], verbose);
    }
}
