/* activity: who the driver saw working, merged sample after sample: the
 * newest time each process was seen busy, since the driver forgets. */
#include "probe/activity.h"

#include <stdlib.h>

void activity_watch(struct activity *a, struct nvml *nv, unsigned i)
{
    struct nvml_busy *b;
    size_t n;
    if (nvml_activity(nv, i, a->since_us, &b, &n) < 0)
        return;
    a->have = true;
    for (size_t j = 0; j < n; j++) {
        if (b[j].at_us > a->since_us)
            a->since_us = b[j].at_us;
        size_t k = 0;
        while (k < a->n && a->seen[k].pid != b[j].pid)
            k++;
        if (k == a->n) {
            struct nvml_busy *v = realloc(a->seen, (a->n + 1) * sizeof *v);
            if (!v)
                break;
            a->seen = v;
            a->seen[a->n++] = b[j];
        } else if (b[j].at_us > a->seen[k].at_us) {
            a->seen[k].at_us = b[j].at_us;
        }
    }
    free(b);
}

void activity_apply(struct activity *a, struct snap_gpu *g, bool prune)
{
    if (!a->have)
        return;
    g->have |= SNAP_HAVE_ACTIVITY;
    size_t kept = 0;
    for (size_t k = 0; k < a->n; k++) {
        bool listed = false;
        for (size_t i = 0; i < g->nprocs; i++)
            if (g->procs[i].pid == a->seen[k].pid) {
                g->procs[i].busy_us = a->seen[k].at_us;
                listed = true;
            }
        if (listed || !prune)
            a->seen[kept++] = a->seen[k];
    }
    a->n = kept;
}

void activity_free(struct activity *a)
{
    free(a->seen);
    a->seen = NULL;
    a->n = 0;
}
