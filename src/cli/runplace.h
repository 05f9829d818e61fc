/* runplace: where `vram run` puts a job and what it checks after: the GPU
 * choice (admission counts other jobs' slices as taken), the group file
 * that is the job's slice, and the processes it left on the GPU. */
#ifndef VRAM_CLI_RUNPLACE_H
#define VRAM_CLI_RUNPLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"
#include "ipc/group.h"
#include "probe/probe.h"

struct runplace_choice {
    unsigned gpu;
    char group_path[GROUP_PATH_MAX];
};

/* Chooses the GPU (gpu: "auto", an index, or a UUID), waiting if asked,
 * and creates the job's group, admitted: every other user's admission
 * counts it from then on. VRAM_EINPUT for a GPU that does not exist,
 * VRAM_EFAIL when none has room (or the wait timed out), or group_dir() is
 * not safe to keep slices in. */
int runplace_pick(struct probe *p, struct snap *s, const char *gpu, uint64_t size, bool wait,
                  double timeout, bool quiet, struct runplace_choice *out, char *err,
                  size_t errlen);

/* Removes the group file. */
void runplace_done(struct runplace_choice *c);

/* Processes of the job (group members, orphans handed to us as subreaper)
 * still holding GPU memory: named on stderr, and killed when reap. Returns
 * how many are left. */
int runplace_leftovers(struct probe *p, struct snap *s, const struct runplace_choice *c, bool reap,
                       bool quiet);

#endif
