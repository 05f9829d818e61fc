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
