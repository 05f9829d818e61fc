/* activity: who the driver saw working, merged sample after sample: the
 * newest time each process was seen busy, since the driver forgets, and
 * its newest sample. */
#include "probe/activity.h"

#include <stdlib.h>

static struct activity_seen *find(struct activity *a, uint32_t pid)
{
    for (size_t k = 0; k < a->n; k++)
        if (a->seen[k].pid == pid)
            return &a->seen[k];
    struct activity_seen *v = realloc(a->seen, (a->n + 1) * sizeof *v);
    if (!v)
        return NULL;
    a->seen = v;
    a->seen[a->n] = (struct activity_seen){.pid = pid};
    return &a->seen[a->n++];
}

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
        struct activity_seen *s = find(a, b[j].pid);
        if (!s)
            break;
        if (b[j].at_us >= s->at.at_us)
            s->at = b[j];
        if ((b[j].sm || b[j].mem) && b[j].at_us > s->busy_us)
            s->busy_us = b[j].at_us;
    }
    free(b);
}

void activity_apply(struct activity *a, struct snap_gpu *g, bool prune, uint64_t now_us)
{
    if (!a->have)
        return;
    g->have |= SNAP_HAVE_ACTIVITY;
    for (size_t i = 0; i < g->nprocs; i++) {
        struct snap_proc *p = &g->procs[i];
        p->util_known = true;
        p->sm_util = p->mem_util = p->enc_util = p->dec_util = 0;
    }
    size_t kept = 0;
    for (size_t k = 0; k < a->n; k++) {
        const struct activity_seen *s = &a->seen[k];
        bool listed = false, fresh = s->at.at_us + ACTIVITY_FRESH_US >= now_us;
        for (size_t i = 0; i < g->nprocs; i++) {
            struct snap_proc *p = &g->procs[i];
            if (p->pid != s->pid)
                continue;
            listed = true;
            if (s->busy_us)
                p->busy_us = s->busy_us;
            if (fresh) {
                p->sm_util = s->at.sm, p->mem_util = s->at.mem;
                p->enc_util = s->at.enc, p->dec_util = s->at.dec;
            }
        }
        if (listed || !prune)
            a->seen[kept++] = *s;
    }
    a->n = kept;
}

void activity_free(struct activity *a)
{
    free(a->seen);
    a->seen = NULL;
    a->n = 0;
}
