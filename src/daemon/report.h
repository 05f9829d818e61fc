/* report: what a scheduler step changed, said once: the log line and
 * event of each model's new state, its counters and histograms, and the
 * store's record of running processes (what a restarted daemon adopts). */
#ifndef VRAM_DAEMON_REPORT_H
#define VRAM_DAEMON_REPORT_H

#include "core/sched.h"
#include "daemon/daemon.h"

/* Model i was in state was before the step that handled ev: says what
 * happened to it (a suspend's or resume's result even when the same step
 * moved it on), and records it. */
void report_change(struct daemon *d, unsigned i, enum sched_state was,
                   const struct sched_event *ev);

/* Writes model i's process to the store, or removes it when it has none. */
void report_record(struct daemon *d, unsigned i);

#endif
