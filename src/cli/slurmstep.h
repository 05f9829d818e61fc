/* slurmstep: `vram slurm step`, a Slurm step's slice. The SPANK plugin
 * (src/slurm/) runs it as the job's user, in the step's environment, at
 * the step's start; it places the slice as `vram run` does (app/runplace.h),
 * and tells the plugin, a line each on stdout:
 *   env NAME=VALUE   a variable for the step's tasks (app/runenv.h)
 *   ready            the slice is made: the tasks may start
 *   error TEXT       it could not be (the exit status says why: 1, 2, 3)
 * then holds the slice (it is the slice's maker: the promise lives while
 * it does) until its stdin closes, the step's end, and says
 *   report TEXT      the step's peak against its slice, for the job's output
 * and removes the slice. A step inside a job whose slice its environment
 * already names (srun inside `sbatch --vram`) shares that slice: ready at
 * once, nothing made, nothing reported. Messages for the user go to
 * stderr. */
#ifndef VRAM_CLI_SLURMSTEP_H
#define VRAM_CLI_SLURMSTEP_H

#include <stdbool.h>
#include <stdint.h>

struct slurmstep_ask {
    uint64_t vram;   /* the slice on each GPU */
    const char *gpu; /* the GPU when Slurm's environment names none, or NULL */
    bool swap;       /* fast swap */
    double wait;     /* seconds to wait for room; 0: refuse at once */
};

/* The exit status: 0, 1 (no room, or no slice could be made), 2 (bad
 * input), 3 (no GPU driver). */
int slurmstep_run(const struct slurmstep_ask *a);

#endif
