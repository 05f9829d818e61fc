/* jobrec: a job's record at slurmctld, through Slurm's own API (the
 * plugin runs inside Slurm's programs, which export it): the GPU memory
 * the job asked for as the GRES "vram" on each node, and the line vram
 * adds to its AdminComment, which `scontrol show job` shows and slurmdbd
 * keeps for `sacct -o AdminComment` (only SlurmUser and root may write
 * it: a user cannot forge the record of their job). */
#ifndef VRAM_SLURM_JOBREC_H
#define VRAM_SLURM_JOBREC_H

#include <stddef.h>
#include <stdint.h>

#include "core/gresreq.h"

/* The job's "vram" GRES per node (out->found false when it asked none).
 * 0, or -1 with the reason in err (slurmctld unreachable, a request
 * vram cannot read). */
int jobrec_vram(uint32_t job, struct gresreq *out, char *err, size_t errlen);

/* Adds line to the job's AdminComment ("; " after what is there). 0, 1
 * when the job had ended already (scancel: slurmctld takes no more
 * updates of it), or -1 with Slurm's reason in err. */
int jobrec_note(uint32_t job, const char *line, char *err, size_t errlen);

#endif
