/* winserved: cli/served.h on Windows, where no vram serve runs (docs/
 * windows.md: no daemon): no process is a model's. */
#include "win/winserved.h"

size_t served_mark(struct snap *s)
{
    for (size_t i = 0; i < s->ngpus; i++)
        for (size_t k = 0; k < s->gpus[i].nprocs; k++)
            s->gpus[i].procs[k].model[0] = '\0';
    return 0;
}

size_t served_mark_mains(struct snap *s, struct served_main *out, size_t max, size_t *nout)
{
    (void)out, (void)max;
    *nout = 0;
    return served_mark(s);
}
