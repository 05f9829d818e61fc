/* runloop: the loop's clock and signals: the tick, the wake-up when time
 * alone changes a decision, the sampler's snapshots, SIGCHLD, SIGTERM and
 * SIGINT (SIGHUP is reload.c's). */
#ifndef VRAM_DAEMON_RUNLOOP_H
#define VRAM_DAEMON_RUNLOOP_H

#include "daemon/daemon.h"

/* Runs the loop until SIGTERM/SIGINT has stopped every model: 0, or -1
 * when its events or the sampler could not start. */
int runloop_run(struct daemon *d);

/* Steps the scheduler again when time alone would change a decision,
 * instead of at the next tick (up to its period later). Called after every
 * step (daemonops.settled). */
void runloop_wake(struct daemon *d);

#endif
