/* sched: the decisions of `vram serve`, as a pure state machine: a model
 * table, a queue of demands and what the GPUs hold in; one event and the
 * time in; the new state and a list of actions (start, stop, suspend,
 * resume, grant, refuse) out. No I/O, no clock, no allocation: the daemon
 * carries the actions out and reports back with more events.
 *
 * It never overcommits a GPU: a model is started or resumed only where its
 * need fits next to what others use (including processes vram does not
 * manage) and what is already committed. Eviction is about pressure: when
 * nothing fits, any model holding no request may go at once (once it has
 * been resident min_resident_ms, against thrash), unpinned ones only,
 * lowest priority first, then least recently used. Keep-alive is about
 * time: a model nobody used for its keep-alive gives its memory back to the
 * machine even with no pressure. A model fast swap moved out may come back
 * while its victims are still moving out (overlap): PCIe carries both
 * ways at once, and the process waits at each allocation for the memory
 * the others give back, never taking more than will be free once they are
 * out. When every model on the GPU is answering, one that may be
 * preempted and has had the GPU for its slice is suspended mid-request (its
 * requests wait, held) so that the waiting model can run: round-robin,
 * lowest priority first, the one out longest back first. A slice is taken
 * only when it pays: the waiting request must have waited as long as the
 * switch delays the preempted model's queue (its backlog times what its
 * last switch took), and never longer than that model's slice, so a
 * saturated model is not sliced back and forth for every arrival while a
 * request for an idle model still waits a slice at most. Time is a
 * parameter: the daemon passes a monotonic clock. */
#ifndef VRAM_CORE_SCHED_H
#define VRAM_CORE_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/modelname.h"

#define SCHED_MAX_GPUS  16
#define SCHED_MAX_QUEUE 1536 /* max_queue proxied requests (1024 at most) and the API's 512 */
#define SCHED_FOREVER   UINT64_MAX /* a keep-alive that never ends */

enum sched_state {
    SCHED_STOPPED,
    SCHED_STARTING,
    SCHED_READY,
    SCHED_BUSY,
    SCHED_SUSPENDING,
    SCHED_SUSPENDED,
    SCHED_RESUMING,
    SCHED_STOPPING,
    SCHED_FAILED,
};

enum sched_evict { SCHED_EVICT_SUSPEND, SCHED_EVICT_STOP };

/* Why a model last left the GPU, as the scheduler chose it: data for the
 * log, the events, vram ps --json and the dashboard. */
enum sched_out_why {
    SCHED_OUT_NONE,      /* never evicted (or only as asked: unload, suspend) */
    SCHED_OUT_ROOM,      /* for another model's memory on gpu */
    SCHED_OUT_PLACE,     /* for another model's place (max_loaded) */
    SCHED_OUT_PREEMPT,   /* mid-request, for another model's turn (a time slice) */
    SCHED_OUT_KEEPALIVE, /* unused for its keep-alive */
};

struct sched_out {
    enum sched_out_why why;
    int for_model;       /* ROOM, PLACE, PREEMPT: the model it made room for; -1 */
    uint64_t for_demand; /* that model's oldest demand (the request that asked); 0: none */
    int gpu;             /* where */
    uint64_t need, free; /* ROOM: what for_model needed there, and what was free */
    unsigned candidates; /* how many models could have gone there (it among them) */
    bool stopped;        /* stopped, not suspended (evict = stop, or no host memory left) */
    uint64_t at_ms;
};

struct sched_model {
    /* from the configuration */
    char name[MODELNAME_MAX];
    uint64_t need; /* bytes on each of its GPUs: the estimate, then what it really used */
    int priority;          /* higher stays resident longer */
    uint64_t keep_alive_ms; /* unused this long, it is evicted anyway; SCHED_FOREVER */
    enum sched_evict evict;
    uint32_t allowed; /* the GPUs it may use, a bit each; 0: any */
    unsigned width;   /* how many GPUs it spans (tensor parallel), all or none; 0 = 1 */
    bool pinned;  /* never evicted */
    bool preempt;      /* may be suspended mid-request, its requests held (fast swap only) */
    uint64_t slice_ms; /* ... once it has had the GPU this long */
    /* the daemon's, before each step: requests waiting for it beyond those it
     * answers (the proxy's queue), and what its last suspend and resume took */
    unsigned backlog;
    uint64_t switch_ms;
    /* the scheduler's */
    enum sched_state state;
    int gpu;        /* the first GPU it is on, or is going to; -1 */
    uint32_t gpus;  /* all of them, a bit each (the need is on each) */
    int resume_gpu; /* where an explicit resume asked for; -1 */
    uint32_t bound; /* suspended by a path that comes back only where it left: there; 0 */
    unsigned holds; /* acquired, not yet released */
    uint64_t last_used_ms;
    uint64_t resident_ms; /* when it last became ready (started or resumed) */
    uint64_t keep_ms;     /* the keep-alive in force: the last request's, or keep_alive_ms */
    uint64_t host_bytes; /* in host RAM (or, with the disk tier, on disk) while suspended */
    unsigned failures;   /* in a row */
    uint64_t retry_at_ms;
    bool want; /* should be resident: loaded, or crashed while resident */
    uint64_t out_ms;     /* when it last left the GPU: the longest out comes back first */
    bool preempted;      /* suspended holding requests, which wait for it */
    bool no_preempt;     /* fast swap could not move it mid-request: not again */
    unsigned preemptions;
    struct sched_out out; /* why it last went out */
    char error[160];
};

struct sched_gpu {
    uint64_t last_preempt_ms; /* the scheduler's: the last preemption here */
    uint64_t claimed;         /* the scheduler's, during a step: room promised to a waiter */
    uint64_t capacity; /* what the GPU can hold: all but the driver's reserve and a margin */
    uint64_t foreign;  /* used by processes vram does not manage */
    uint64_t budget;   /* the most models may hold together, foreign aside; 0: capacity */
};

struct sched_demand {
    uint64_t id;
    unsigned model;
    uint64_t deadline_ms;
    bool hold; /* an acquire: busy until released */
    uint64_t since_ms;
};

struct sched {
    struct sched_model *models;
    size_t nmodels;
    struct sched_gpu gpus[SCHED_MAX_GPUS];
    size_t ngpus;
    uint64_t host_budget;     /* host RAM for suspended models */
    uint64_t spill_budget;    /* disk for them beside it (the disk tier, fast swap only); 0: none */
    uint64_t min_resident_ms; /* a model is not evicted sooner after it became ready */
    bool min_resident_auto;   /* ... than its own switch_ms (1 s until measured) */
    bool overlap; /* a fast-swapped model may come back while its victims still leave */
    uint64_t preempt_gap_ms; /* at most one preemption per GPU this often (against thrash) */
    unsigned max_failures;
    uint64_t backoff_ms; /* doubled after each failure */
    /* max_loaded: models loaded at once (starting, ready, busy, resuming;
     * one on its way out has given its place back), in all and on each
     * GPU; 0: no limit. A model that needs a place another holds evicts
     * one, as it would for memory. */
    unsigned max_loaded, max_loaded_gpu;
    unsigned places_claimed[SCHED_MAX_GPUS], places_claimed_all; /* the scheduler's, in a step */
    struct sched_demand queue[SCHED_MAX_QUEUE];
    size_t nqueue;
};

enum sched_ev {
    SCHED_EV_DEMAND,    /* model, id, deadline_ms, hold: make it ready (and hold it) */
    SCHED_EV_RELEASE,   /* model, keep_set, keep_ms: one hold less; the request's keep-alive */
    SCHED_EV_UNLOAD,    /* model: stop it */
    SCHED_EV_SUSPEND,   /* model: suspend it now (it must be idle) */
    SCHED_EV_RESUME,    /* model, gpu (-1: any): bring it back */
    SCHED_EV_READY,     /* model, bytes: started and healthy, using bytes */
    SCHED_EV_FAILED,    /* model, error: did not start */
    SCHED_EV_EXITED,    /* model, error: its process is gone */
    SCHED_EV_SUSPENDED, /* model, ok, bytes (host), bound, error */
    SCHED_EV_RESUMED,   /* model, ok, error */
    SCHED_EV_TICK,      /* time passed: timeouts, retries */
    SCHED_EV_WITHDRAW,  /* model, id: whoever asked is gone; the demand, still waiting, is not */
};

struct sched_event {
    enum sched_ev kind;
    unsigned model;
    uint64_t id;
    uint64_t deadline_ms;
    bool hold;
    int gpu;
    bool ok;
    uint64_t bytes;
    bool bound; /* SUSPENDED: it can come back only on the GPU it left (fast swap) */
    bool keep_set;    /* RELEASE: the request asked for its own keep-alive */
    uint64_t keep_ms; /* RELEASE with keep_set: 0 = evict once idle, SCHED_FOREVER */
    const char *error;
};

enum sched_act {
    SCHED_ACT_START,   /* model on gpu */
    SCHED_ACT_STOP,    /* model */
    SCHED_ACT_SUSPEND, /* model */
    SCHED_ACT_RESUME,  /* model onto gpu */
    SCHED_ACT_GRANT,   /* demand id: its model is ready (and held if asked) */
    SCHED_ACT_REFUSE,  /* demand id, why */
};

/* Why a demand was refused: what the asker tells its client (a model that
 * failed is the backend's fault, 502; the rest are 503, try again). */
enum sched_refusal {
    SCHED_REFUSED_FAILED,    /* the model failed to start, too many times */
    SCHED_REFUSED_RESUME,    /* its resume failed */
    SCHED_REFUSED_TIMEOUT,   /* no room came before the deadline */
    SCHED_REFUSED_UNLOADED,  /* unloaded while the demand waited */
    SCHED_REFUSED_QUEUE_FULL, /* too many demands waiting */
    SCHED_REFUSED_TOO_BIG     /* it needs more than any GPU it may use holds for models */
};

struct sched_action {
    enum sched_act kind;
    unsigned model;
    int gpu;
    uint64_t id;
    uint64_t overlap;           /* RESUME: bytes still leaving its GPU meanwhile; 0: none */
    bool preempt;               /* SUSPEND: mid-request, by fast swap only */
    enum sched_refusal refusal; /* REFUSE: why, in a word */
    char why[200];              /* REFUSE: why, for people; STOP by eviction: why not suspended */
};

/* Applies e at now_ms; writes up to max actions and returns how many. The
 * daemon must size out for the worst case (SCHED_MAX_QUEUE + 4 * nmodels). */
size_t sched_step(struct sched *s, const struct sched_event *e, uint64_t now_ms,
                  struct sched_action *out, size_t max);


/* What models on gpu hold or are about to: the sum of their needs. */
uint64_t sched_committed(const struct sched *s, int gpu);

const char *sched_state_name(enum sched_state st);

#endif
