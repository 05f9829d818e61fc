/* procs: each model's process, as the supervisor runs it: started,
 * polled for health until it answers and is measured, stopped, reaped (or,
 * adopted, found gone). The scheduler's START and STOP actions arrive here
 * through the daemon's table (daemonops.h, filled by serve.c); what comes
 * of them goes back to it as events. */
#ifndef VRAM_DAEMON_PROCS_H
#define VRAM_DAEMON_PROCS_H

#include <stdbool.h>

#include "daemon/daemon.h"

/* Model i's timer (health polls while it starts, the kill after a grace
 * period), once its row is filled. */
void procs_init_model(struct daemon *d, unsigned i);

/* Starts model i's process on the GPUs its scheduler row names; one that
 * cannot start is posted FAILED. */
void procs_start(struct daemon *d, unsigned i, int gpu);

/* Stops model i's process: its stop command (stop =), else SIGTERM, then
 * SIGKILL after a grace period; one already gone is posted EXITED. */
void procs_stop(struct daemon *d, unsigned i);

/* Reaps the children that ended: a model's process (EXITED, or FAILED
 * while it starts), a stop command. */
void procs_reap(struct daemon *d);

/* The latest snapshot (the sampler's, or one taken now before the loop
 * runs): memory used by others per GPU (with others' slices: placement);
 * adopted models that died; models that answered their health check,
 * measured. */
void procs_refresh(struct daemon *d);

/* Whether any model's process still runs. */
bool procs_any_alive(const struct daemon *d);

#endif
