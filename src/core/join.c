/* join: the driver's process list joined with the host's knowledge.
 *
 * A process NVML lists but /proc does not show is either gone (it exited
 * between the two reads) or in a PID namespace we cannot see. If the driver
 * still has a name for it we keep it, named by the driver; otherwise it is
 * dropped rather than shown as a row of blanks. */
#include "core/join.h"

#include <stdio.h>
#include <string.h>

#include "core/role.h"
#include "core/textsafe.h"

void join_procs(struct snap_gpu *g, const struct join_lookup *l)
{
    size_t keep = 0;
    for (size_t i = 0; i < g->nprocs; i++) {
        struct snap_proc p = g->procs[i];
        if (l->host(l->ctx, &p) < 0) {
            if (l->driver_name(l->ctx, p.pid, p.cmdline, sizeof p.cmdline) < 0 || !p.cmdline[0])
                continue;
            textsafe(p.cmdline); /* the driver's copy of a name the process chose */
            snprintf(p.name, sizeof p.name, "%s", role_base(p.cmdline));
        }
        p.role = role_of(p.name, p.types);
        g->procs[keep++] = p;
    }
    g->nprocs = keep;
}
