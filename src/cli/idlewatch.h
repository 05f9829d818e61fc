/* idlewatch: watching the GPUs for a while to learn which processes do no
 * GPU work, for `doctor --idle` and `reclaim --idle`. */
#ifndef VRAM_CLI_IDLEWATCH_H
#define VRAM_CLI_IDLEWATCH_H

#include "core/snapshot.h"
#include "probe/probe.h"

/* Samples every second for seconds (progress on stderr when it is a
 * terminal), leaving in s the last snapshot with each process's busy_us.
 * Returns 0, or -1 with err set when no GPU keeps per-process samples. */
int idlewatch_run(struct probe *p, struct snap *s, double seconds, char *err, size_t errlen);

#endif
