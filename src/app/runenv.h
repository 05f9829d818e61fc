/* runenv: the environment of a capped command, the same whoever starts it
 * (`vram run`, a Slurm step under the SPANK plugin): libvramcap preloaded
 * ahead of what was preloaded already, the job's group file on each GPU,
 * its GPUs by UUID in the order chosen, fast swap when asked. */
#ifndef VRAM_APP_RUNENV_H
#define VRAM_APP_RUNENV_H

#include <stdbool.h>

#include "app/runplace.h"
#include "core/snapshot.h"

#define RUNENV_VARS 4

struct runenv {
    unsigned n;
    struct runenv_var {
        const char *name;
        char *value;
    } var[RUNENV_VARS];
};

/* The variables for a job placed at place (its GPUs are snapshot s's):
 * shim the path of libvramcap.so, preload the LD_PRELOAD the command
 * would have had (NULL or "": none). 0, or -1 out of memory (e freed). */
int runenv_make(struct runenv *e, const struct runplace_choice *place, const struct snap *s,
                const char *shim, const char *preload, bool swap);

void runenv_free(struct runenv *e);

#endif
