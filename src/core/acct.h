/* acct: where every byte of a GPU's memory went. Pure: a GPU snapshot in, a
 * breakdown out, whose parts always add up to the total, none negative. */
#ifndef VRAM_CORE_ACCT_H
#define VRAM_CORE_ACCT_H

#include "core/snapshot.h"

struct acct {
    uint64_t total;
    uint64_t reserved;     /* the driver's own, invisible to process lists */
    uint64_t display;      /* desktop: compositors, X, graphics clients */
    uint64_t workloads;    /* compute processes */
    uint64_t other;        /* processes of no known role */
    uint64_t unattributed; /* used, but by no process this user can see */
    uint64_t free;
    /* the processes' own figures added up, before any clamping */
    uint64_t listed;
    /* the driver's numbers contradicted each other (processes listed more
     * than "used", or total != reserved + used + free): parts were clamped */
    bool inconsistent;
    /* reserved is folded into unattributed: the driver only had the v1 call */
    bool reserved_unknown;
};

void acct_gpu(const struct snap_gpu *g, struct acct *out);

/* Memory in use in the sense nvidia-smi prints: total - free. */
uint64_t acct_used(const struct acct *a);

#endif
