/* runplace: where a capped job goes (`vram run`'s, a Slurm step's under the
 * SPANK plugin) and what `vram run` checks after: the GPUs it gets
 * (admission counts other jobs' slices as taken, and takes every GPU or
 * none), the group file on each that is the job's slice there, and the
 * processes it left on them. */
#ifndef VRAM_APP_RUNPLACE_H
#define VRAM_APP_RUNPLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/gpuspec.h"
#include "core/snapshot.h"
#include "ipc/group.h"
#include "probe/probe.h"

#define RUNPLACE_MAX GPUSPEC_MAX

struct runplace_choice {
    unsigned n;                  /* GPUs the job got */
    unsigned gpu[RUNPLACE_MAX];  /* their indexes, in CUDA_VISIBLE_DEVICES's order */
    uint64_t size[RUNPLACE_MAX]; /* the slice on each; 0: no cap */
    char group_path[RUNPLACE_MAX][GROUP_PATH_MAX];
};

/* How a job waits for room, and how it says so. */
struct runplace_opts {
    bool wait;       /* queue until the GPUs have room */
    double timeout;  /* with wait: give up after this many seconds (0: never) */
    bool quiet;      /* no waiting line on stderr */
    const char *who; /* the waiting line's prefix: "vram run" */
    /* the option that makes a refused job wait, named in the refusal
     * ("--wait"); NULL: the refusal names none */
    const char *wait_option;
};

/* Chooses the GPUs (gpus: how many, or which: an index or a UUID, or its
 * prefix, each; NULL: any one), waiting if asked, and creates the job's
 * group on each, admitted: every other user's admission counts them from
 * then on. sizes: the slice on every GPU, or per GPU index (keyed: the
 * indexes must be those of gpus); NULL or empty: no cap. All the GPUs or
 * none: a refusal leaves no group behind. VRAM_EINPUT for a GPU that does
 * not exist, named twice, or sizes for other GPUs than those named;
 * VRAM_EFAIL when they have no room (or the wait timed out), or group_dir()
 * is not safe to keep slices in. */
int runplace_pick(struct probe *p, struct snap *s, const struct gpuspec_gpus *gpus,
                  const struct gpuspec_sizes *sizes, const struct runplace_opts *o,
                  struct runplace_choice *out, char *err, size_t errlen);

/* Removes the group files. */
void runplace_done(struct runplace_choice *c);

/* Processes of the job (members of its groups, orphans handed to us as
 * subreaper) still holding GPU memory: named on stderr, and killed when reap. Returns
 * how many are left. */
int runplace_leftovers(struct probe *p, struct snap *s, const struct runplace_choice *c, bool reap,
                       bool quiet);

#endif
