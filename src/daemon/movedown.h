/* movedown: the disk tier's moves down, a suspended model's host memory
 * to its spill file ahead of the next suspend (daemon/disktier.h holds the
 * files), and the spill file's descriptor a job carries. */
#ifndef VRAM_DAEMON_MOVEDOWN_H
#define VRAM_DAEMON_MOVEDOWN_H

#include <stdint.h>
#include <sys/types.h>

#include "daemon/daemon.h"
#include "move/worker.h"

/* Room in host memory for need bytes more, made by moving the suspended
 * model holding the most there down a slice; at most one move at a time,
 * none while a resume reads the disk. After every step. */
void movedown_room(struct daemon *d, uint64_t need);

/* A move down's report (the worker's WORKER_SPILL chore). */
void movedown_done(struct daemon *d, const struct worker_report *r);

/* The daemon's copy of the spill file sent with a job: the model holds
 * its own now, or none. */
void movedown_close_fd(struct dmodel *dm);

/* Who a model's spill file is given to: its user where it runs as
 * another, else nobody new ((uid_t)-1). */
uid_t movedown_owner(const struct dmodel *dm);

#endif
