/* schedwhen: what the scheduler says between its steps (core/sched.c
 * decides at each step): when time alone would change a decision, when a
 * model's keep-alive runs out, whether a GPU is contended and whom a
 * switch there would move out first; and the two spans its decisions
 * wait on, how long a model is spared after it came in and how long a
 * request must wait before a busy model is preempted for it. */
#ifndef VRAM_CORE_SCHEDWHEN_H
#define VRAM_CORE_SCHEDWHEN_H

#include <stdbool.h>
#include <stdint.h>

#include "core/sched.h"

/* When model i's keep-alive runs out (SCHED_FOREVER: never; 0: it is not
 * resident and idle). */
uint64_t schedwhen_expires(const struct sched *s, unsigned i);

/* The next time after now at which time alone would change a decision:
 * a model someone waits for could evict one that turns min_resident old
 * or preempt one whose slice ends, a keep-alive ends, a start is retried,
 * a demand runs out of time. SCHED_FOREVER when nothing is due. The
 * daemon steps again then, not at its next tick: a wait bounded by
 * min_resident is that long, not up to a tick more. */
uint64_t schedwhen_next_ms(const struct sched *s, uint64_t now);

/* Whether the models that may use GPU g need more together than it holds
 * for them: a switch there evicts someone sooner or later. */
bool schedwhen_contended(const struct sched *s, int g);

/* The model on g that a switch there would move out first as things stand
 * (min_resident aside): an idle one before a busy one, then the lowest
 * priority, then the least recently used; -1 when none could go. The
 * daemon readies its host memory ahead. */
int schedwhen_next_victim(const struct sched *s, int g);

/* How long m stays resident before another may evict it (min_resident). */
uint64_t schedwhen_spared_ms(const struct sched *s, const struct sched_model *m);

/* How long a request must have waited before busy m is preempted for it. */
uint64_t schedwhen_preempt_bar(const struct sched_model *m);

#endif
