/* snapshot: ownership of the plain data (the one free function). */
#include "core/snapshot.h"

#include <stdlib.h>
#include <string.h>

void snap_free(struct snap *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->ngpus; i++)
        free(s->gpus[i].procs);
    free(s->gpus);
    memset(s, 0, sizeof *s);
}

int snap_copy(struct snap *dst, const struct snap *src)
{
    snap_free(dst);
    *dst = *src;
    dst->gpus = NULL;
    dst->ngpus = 0;
    if (!src->ngpus)
        return 0;
    if (!(dst->gpus = calloc(src->ngpus, sizeof *dst->gpus)))
        return -1;
    for (size_t g = 0; g < src->ngpus; g++) {
        dst->gpus[g] = src->gpus[g];
        dst->gpus[g].procs = NULL;
        dst->gpus[g].nprocs = 0;
        dst->ngpus = g + 1;
        size_t n = src->gpus[g].nprocs;
        if (!n)
            continue;
        if (!(dst->gpus[g].procs = malloc(n * sizeof *dst->gpus[g].procs)))
            return -1;
        memcpy(dst->gpus[g].procs, src->gpus[g].procs, n * sizeof *dst->gpus[g].procs);
        dst->gpus[g].nprocs = n;
    }
    return 0;
}
