/* join: the driver's process list joined with what the host knows of each
 * process, through lookups the caller provides (the real /proc and NVML, or
 * fakes in tests). */
#ifndef VRAM_CORE_JOIN_H
#define VRAM_CORE_JOIN_H

#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"

struct join_lookup {
    /* fills the host fields of p; -1 when the host does not show the pid */
    int (*host)(void *ctx, struct snap_proc *p);
    /* the driver's own name for a pid (a path), -1 when it has none */
    int (*driver_name)(void *ctx, uint32_t pid, char *buf, size_t len);
    void *ctx;
};

/* Completes g->procs in place and gives each its role. A process neither the
 * host nor the driver can name has exited since the driver listed it: it is
 * dropped, and its bytes fall to "unattributed". */
void join_procs(struct snap_gpu *g, const struct join_lookup *l);

#endif
