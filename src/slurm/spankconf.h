/* spankconf: the SPANK plugin's arguments, as the admin writes them after
 * its path in plugstack.conf:
 *   optional spank_vram.so [vram=PATH] [swap=yes|no] [wait=T] [epilog=yes|no]
 *                          [grace=T] [env=NAME=VALUE]...
 * vram=     the vram program the plugin runs (default: the one installed
 *           with it)
 * swap=     fast swap for capped steps, as vram run --swap (default yes)
 * wait=     how long a step waits for room on its GPU when Slurm's count
 *           let it in but the GPU is short (default 0: it fails at once,
 *           saying whose memory is in the way)
 * epilog=   the check at each job's end (default yes)
 * grace=    the epilog's time between TERM and KILL (default 5s)
 * env=      a variable for vram where root runs it (the epilog), which has
 *           only slurmd's short environment: VRAM_RUN_DIR where the node
 *           keeps its slices elsewhere (repeatable) */
#ifndef VRAM_SLURM_SPANKCONF_H
#define VRAM_SLURM_SPANKCONF_H

#include <stdbool.h>
#include <stddef.h>

#define SPANKCONF_ENV 16

struct spankconf {
    const char *vram;
    bool swap, epilog;
    double wait, grace;
    unsigned nenv;
    const char *env[SPANKCONF_ENV]; /* "NAME=VALUE", pointing into argv */
};

/* The arguments into c (defaults first; vram: default_vram). 0, or -1
 * with the argument refused and what to write instead in err. */
int spankconf_parse(int argc, char **argv, const char *default_vram, struct spankconf *c, char *err,
                    size_t errlen);

#endif
