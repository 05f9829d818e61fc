/* daemonops: the daemon's parts as its scheduler step calls them: one
 * table of operations, filled by serve.c and set in d->ops. daemon.c
 * decides (the scheduler's step, the queue of events, the demands and
 * their answers) and includes none of the parts that act: processes
 * (procs.c), moves (moves.c), placement (promised.c), reports (report.c),
 * the control API (api.c), the proxy's queues, the loop's wake-up
 * (runloop.c). They call the core back (daemon_step, daemon_post) through
 * daemon.h. Every operation runs on the loop's thread and returns at
 * once; one that raises an event posts it (daemon_post, or daemon_step,
 * which queues it while a step runs): it is applied after the actions
 * being carried out, never re-entrantly. The unit test of the step fills
 * the table with fakes (tests/unit/test_dstep.c). */
#ifndef VRAM_DAEMON_DAEMONOPS_H
#define VRAM_DAEMON_DAEMONOPS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/sched.h"

struct daemon;

struct daemonops {
    /* Placement: the scheduler's foreign memory on each GPU made current
     * (what others held at the last snapshot, what others' slices promise
     * now), before a demand that may start or resume a model. */
    void (*place)(struct daemon *d);
    /* How many requests wait in the proxy for model i (what a time slice
     * would cost it). Reads only. */
    unsigned (*waiting)(struct daemon *d, unsigned i);
    /* Reports: model i was in state was before the step that handled ev:
     * say what happened to it and record it. */
    void (*changed)(struct daemon *d, unsigned i, enum sched_state was,
                    const struct sched_event *ev);
    /* Processes: start model i's (its GPUs are the scheduler's row's), or
     * stop it; a start or stop that cannot be done posts its event. */
    void (*start)(struct daemon *d, unsigned i, int gpu);
    void (*stop)(struct daemon *d, unsigned i);
    /* Moves: model i out (resume false) or back on gpu (overlap: another
     * model is moving off it meanwhile); preempt: mid-request. */
    void (*move)(struct daemon *d, unsigned i, bool resume, int gpu, uint64_t overlap,
                 bool preempt);
    /* The control API: models' states changed at now_ms (the requests
     * waiting for one are answered, or out of time). */
    void (*stepped)(struct daemon *d, uint64_t now_ms);
    /* After the step, once its events are all applied: host memory readied
     * for what comes next, and the loop woken when time alone changes a
     * decision. */
    void (*settled)(struct daemon *d);
};

#endif
