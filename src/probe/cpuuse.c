/* cpuuse: CPU % between two readings of a process's CPU time. */
#include "probe/cpuuse.h"

#include <stdlib.h>

static const struct cpuuse_seen *before(const struct cpuuse *c, const struct snap_proc *p)
{
    for (size_t k = 0; k < c->n; k++)
        if (c->seen[k].pid == p->pid && c->seen[k].start_time == p->start_time)
            return &c->seen[k];
    return NULL;
}

void cpuuse_apply(struct cpuuse *c, struct snap *s, uint64_t now_ms)
{
    size_t total = 0;
    for (size_t g = 0; g < s->ngpus; g++)
        total += s->gpus[g].nprocs;
    struct cpuuse_seen *next = calloc(total ? total : 1, sizeof *next);
    size_t n = 0;
    for (size_t g = 0; g < s->ngpus; g++)
        for (size_t i = 0; i < s->gpus[g].nprocs; i++) {
            struct snap_proc *p = &s->gpus[g].procs[i];
            p->cpu_known = false;
            p->cpu_pct = 0;
            if (!p->host_known)
                continue;
            const struct cpuuse_seen *b = before(c, p);
            /* a clock set back, or two lists in the same millisecond: no rate */
            if (b && now_ms > b->at_ms && p->cpu_ms >= b->cpu_ms) {
                p->cpu_pct = (double)(p->cpu_ms - b->cpu_ms) * 100.0 / (double)(now_ms - b->at_ms);
                p->cpu_known = true;
            }
            bool dup = false; /* a process on several GPUs: one reading */
            for (size_t k = 0; k < n && !dup; k++)
                dup = next[k].pid == p->pid;
            if (next && !dup)
                next[n++] = (struct cpuuse_seen){p->pid, p->start_time, p->cpu_ms, now_ms};
        }
    free(c->seen);
    c->seen = next;
    c->n = next ? n : 0;
}

void cpuuse_free(struct cpuuse *c)
{
    free(c->seen);
    c->seen = NULL;
    c->n = 0;
}
