/* moves: carrying out the scheduler's suspends and resumes of a model (all
 * its processes that hold GPU memory, by fast swap into its window of the
 * daemon's host pool or by the driver's checkpoint) on a worker thread,
 * and turning the worker's report into the scheduler's event. */
#ifndef VRAM_DAEMON_MOVES_H
#define VRAM_DAEMON_MOVES_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/daemon.h"
#include "move/worker.h"

/* Starts moving model i out (resume false) or back (on GPU gpu; overlap:
 * another model is moving off it meanwhile, so the resume may wait for
 * its room); preempt: mid-request, fast swap or nothing. A move that
 * cannot start is reported to the scheduler at once. */
void moves_start(struct daemon *d, unsigned i, bool resume, int gpu, uint64_t overlap,
                 bool preempt);

/* Readies host memory for what comes next: the spare of populated chunks
 * (the largest model's share; two while models are out), and the chunks
 * of the model each contended GPU would move out next, pinned by it ahead;
 * one that stopped being next for a while gives them back. Called after
 * every step. */
void moves_plan(struct daemon *d);

/* Model i's process is gone (or going): its chunks come back. */
void moves_forget(struct daemon *d, unsigned i);

/* The worker's side (worker_new's run and done, arg the daemon). */
void moves_job(void *arg, const struct worker_job *j, struct worker_report *r);
void moves_done(void *arg, const struct worker_report *r);

#endif
