/* slurmepilog: `vram slurm epilog`, the check at a Slurm job's end. The
 * SPANK plugin runs it as root once every step of the job has ended and
 * Slurm has stopped the processes it tracks: a process of the job still
 * holding GPU memory now is one it lost (a daemon that left the step's
 * process tree, a proctrack that cannot see it), and the next job on the
 * GPU would find its memory gone. Each is named and ended as `vram
 * reclaim` ends one (TERM, a grace, KILL), and what came back is said: a
 * line each on stdout, which the plugin logs in slurmd's log. */
#ifndef VRAM_CLI_SLURMEPILOG_H
#define VRAM_CLI_SLURMEPILOG_H

#include <stdint.h>

/* A process is the job's when it is the job's user's (its real uid) and
 * carries the job's tag: SLURM_JOB_ID=job in the environment it started
 * with, or a Slurm cgroup of the job (host/cgroup.h). The exit status:
 * 0 (none left, or all ended), 1 (some still hold memory after KILL),
 * 3 (no GPU driver: nothing to check, said). */
int slurmepilog_run(uint32_t job, uint32_t uid, double grace);

#endif
