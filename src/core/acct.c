/* acct: where every byte of a GPU's memory went.
 *
 * The driver gives total, reserved, used, free and a per-process list; none of
 * these is guaranteed to agree with the others (process figures are sampled at
 * other instants than the memory counters, and some drivers report a process
 * twice, as compute and graphics). The rules, in order:
 *   1. reserved and used are clamped into total; free is what is left, so the
 *      parts always sum to total exactly;
 *   2. each process counts once, in its role (a process both compute and
 *      graphics was merged by the GPU layer);
 *   3. if the processes add up to more than "used", each role is scaled down
 *      in proportion, so nothing is counted twice and unattributed is 0;
 *   4. otherwise unattributed = used - processes: memory held by processes we
 *      cannot see (other users, other PID namespaces) or by nobody. */
#include "core/acct.h"

#include <string.h>

static uint64_t scale(uint64_t part, uint64_t num, uint64_t den)
{
    return den ? (uint64_t)((unsigned __int128)part * num / den) : 0;
}

void acct_gpu(const struct snap_gpu *g, struct acct *a)
{
    memset(a, 0, sizeof *a);
    const struct snap_mem *m = &g->mem;
    a->total = m->total;
    a->reserved_unknown = m->version < 2;

    a->reserved = m->reserved < a->total ? m->reserved : a->total;
    uint64_t room = a->total - a->reserved;
    uint64_t used = m->used < room ? m->used : room;
    a->free = room - used;
    if (m->reserved > a->total || m->used > room ||
        (m->version >= 2 && m->reserved + m->used + m->free != m->total) ||
        (m->version < 2 && m->used + m->free != m->total))
        a->inconsistent = true;

    uint64_t by_role[3] = {0, 0, 0};
    for (size_t i = 0; i < g->nprocs; i++) {
        const struct snap_proc *p = &g->procs[i];
        if (!p->used_known)
            continue;
        unsigned r = (unsigned)p->role < 3 ? (unsigned)p->role : SNAP_ROLE_OTHER;
        by_role[r] += p->used < a->total ? p->used : a->total;
    }
    uint64_t listed = by_role[0] + by_role[1] + by_role[2];
    a->listed = listed;

    if (listed > used) {
        a->inconsistent = true;
        uint64_t given = 0;
        for (int r = 0; r < 3; r++) {
            by_role[r] = scale(by_role[r], used, listed);
            given += by_role[r];
        }
        /* integer division leaves a few bytes; give them to the largest part */
        int big = 0;
        for (int r = 1; r < 3; r++)
            if (by_role[r] > by_role[big])
                big = r;
        by_role[big] += used - given;
        listed = used;
    }
    a->other = by_role[SNAP_ROLE_OTHER];
    a->display = by_role[SNAP_ROLE_DISPLAY];
    a->workloads = by_role[SNAP_ROLE_WORKLOAD];
    a->unattributed = used - listed;
}

uint64_t acct_used(const struct acct *a)
{
    return a->total - a->free;
}
