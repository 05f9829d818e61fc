/* daemon: `vram serve`'s core and model table. One thread runs it all on
 * libevent. The core decides: it feeds one event at a time to the pure
 * scheduler (core/sched.c), queues the events raised meanwhile, and hands
 * the scheduler's actions to the parts that act, through the table
 * serve.c fills (daemonops.h): processes (procs.c), moves (moves.c),
 * placement (promised.c), reports (report.c), the control API (api.c),
 * the loop's clock and signals (runloop.c). It includes none of them;
 * they own their own state, read the table below and reach the scheduler
 * only through daemon_step, daemon_post, daemon_demand and
 * daemon_release. */
#ifndef VRAM_DAEMON_DAEMON_H
#define VRAM_DAEMON_DAEMON_H

#include <event2/event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/sched.h"
#include "core/schedwhen.h"
#include "core/snapshot.h"
#include "conf/config.h"
#include "daemon/demand.h"
#include "core/hist.h"

struct api;
struct events;
struct proxy;
struct worker;
struct store;
struct probe;
struct ckpt;
struct hostpool;
struct health;
struct sampler;
struct discover;
struct disktier;
struct daemonops;

/* A model's process, as the supervisor sees it. */
struct dmodel {
    struct daemon *d; /* for callbacks: the daemon and this model's index */
    unsigned index;
    struct config_model cfg;
    bool removed;     /* gone from the configuration: stopped, then ignored */
    bool reconfigure; /* changed by a reload while busy: restarted once idle */
    pid_t pid;
    uint64_t start; /* its start time in ticks */
    uid_t uid;      /* the user it runs as (its slices are that user's) */
    bool child;     /* ours to reap; adopted ones are polled */
    unsigned port;
    uint64_t began_ms; /* when the current start, suspend or resume began */
    uint64_t deadline_ms;
    struct event *timer;    /* health polls while starting; the kill after a grace period */
    uint64_t measure_gen;   /* healthy: the snapshot (sampler_ask) that measures it; 0: none */
    pid_t stopper; /* its stop command while it runs; -1: it ran, the model has its timeout */
    struct health *health;  /* the poll in flight */
    char how[16];        /* how it was last suspended */
    int left_gpu;        /* the GPU a suspended model left, for the restore's remapping */
    uint32_t left_gpus;  /* all those it left */
    pid_t moving[16];    /* its processes a suspend moved, for the resume */
    uint64_t moving_bytes[16];
    unsigned nmoving;
    uint64_t host_bytes;
    uint64_t out_wall_ms; /* when it was last suspended (or adopted suspended), wall clock */
    uint64_t moved; /* what its last fast swap moved: the size of its next host memory */
    /* host memory readied ahead (moves.c): chunks pinned by its process for
     * its next suspend (prepared: all of its share; fewer while it is
     * readied step by step); a prepare or drop in flight; a move asked for
     * meanwhile, started once that is done */
    bool prepared;
    uint64_t unpredicted_ms; /* prepared, but not the next to go since then; 0: it is */
    bool chore;
    uint64_t pin_ms;    /* the readying so far: its steps' pinning, added up */
    unsigned pin_steps;
    struct {
        bool on, resume, preempt;
        int gpu;
        uint64_t overlap;
    } pend;
    int spill_fd;      /* the spill file sent with the move or spill in flight; -1 */
    bool spilling;     /* its host memory is going down to its spill file */
    uint64_t spill_ms; /* what its last move down took */
    uint64_t spill_had; /* what its spill file held before the move down in flight */
    char stop_why[200]; /* evicted by a stop, not a suspend: why (for its log line) */
    unsigned restarts, starts, suspends, resumes;
    double last_start_s, last_suspend_s, last_resume_s;
    struct hist start_h, suspend_h, resume_h; /* every one of them, for /metrics */
    uint64_t held_since_ms; /* preempted: since when its requests wait; 0: not */
    uint64_t held_ms;       /* time its requests spent waiting while it was preempted */
    char out_who[96];       /* who asked for the model it last went out for (evictwhy.c) */
};

struct daemon {
    const struct daemonops *ops; /* the parts that act (serve.c's table) */
    struct event_base *base;
    struct config cfg;
    struct sched sched;
    struct sched_model smodels[CONFIG_MAX_MODELS];
    struct dmodel dm[CONFIG_MAX_MODELS];
    struct demands demands;
    struct store *store;
    struct probe *probe;
    struct ckpt *ckpt; /* NULL: suspend falls back to stop, unless fast swap serves */
    char ckpt_why[256];
    struct snap snap;
    char gpu_uuid[SCHED_MAX_GPUS][96];
    char gpu_name[SCHED_MAX_GPUS][96];
    uint64_t held_by_others[SCHED_MAX_GPUS]; /* used by processes not ours, at the last snapshot */
    struct api *api;
    struct events *events;
    struct proxy *proxy; /* NULL without listen = */
    struct worker *worker;
    struct hostpool *pool; /* fast swap's pinned host memory; NULL: each model its own */
    struct disktier *disk; /* the disk tier below it; NULL: none (spill = no) */
    uint64_t host_budget;  /* what host_budget allows; the pool's limit is lower while RAM is short */
    uint64_t ram_checked_ms; /* when moves.c last matched the pool's limit to RAM */
    struct sampler *sampler; /* the GPU snapshots, off the loop; NULL before the loop runs */
    struct event *tick, *sig[3];
    struct event *hup; /* SIGHUP: a reload (reload.c) */
    struct event *wake;   /* one shot: when time alone changes a decision (schedwhen_next_ms) */
    uint64_t wake_at_ms; /* what it is armed for; 0: not armed */
    /* events raised while actions run, applied after them in order */
    struct sched_event evq[64];
    char evq_err[64][232];
    size_t evq_head, evq_n;
    bool stepping;
    char shim[1024]; /* libvramcap.so, "" when not found */
    struct discover *disc; /* what discovered models were started with (discover.h) */
    uint64_t last_snap_ms;
    uint64_t snap_gen; /* the sampler's generation of d->snap */
    bool quitting;
};

/* The daemon's time: a monotonic clock, which a change of the wall clock
 * cannot turn into a keep-alive ended early or a start timed out. */
uint64_t daemon_now_ms(void);

/* A time of daemon_now_ms's, on the wall clock, for people and scripts. */
uint64_t daemon_wall_ms(uint64_t mono_ms);

/* Feeds one event to the scheduler and carries out what it decides
 * through d->ops; events raised meanwhile are applied after, never
 * re-entrantly. */
void daemon_step(struct daemon *d, const struct sched_event *e);

/* Asks the scheduler for model, held busy until daemon_release when hold;
 * the answer comes to ops within wait_ms. 0 when too many demands wait
 * (nothing will be called). The id goes to *idp (may be NULL) before
 * anything is asked: the answer may come before this returns. who says
 * who asked ("POST /v1/chat/completions", "vram load"), for the reason of
 * an eviction made for it. */
uint64_t daemon_demand(struct daemon *d, unsigned model, bool hold, uint64_t wait_ms,
                       const struct demand_ops *ops, void *arg, uint64_t *idp, const char *who);

/* The asker of demand id (for model) is gone before an answer: neither
 * of ops will be called, and the scheduler forgets the demand. */
void daemon_withdraw(struct daemon *d, unsigned model, uint64_t id);

/* One hold on model less. */
void daemon_release(struct daemon *d, unsigned model);

/* The same, at the end of a request that asked how long its model stays
 * (keep_set; keep_ms 0: evict once idle, SCHED_FOREVER: for good). */
void daemon_release_keep(struct daemon *d, unsigned model, bool keep_set, uint64_t keep_ms);

/* Time model's requests have spent held while it was preempted, all told
 * (the current preemption included): a request's share is the difference
 * across its life. */
uint64_t daemon_held_ms(const struct daemon *d, unsigned model);

/* The model whose process (or one of its family) pid is, or -1. */
int daemon_model_of_pid(const struct daemon *d, uint32_t pid);

/* What model i's processes hold in the latest snapshot: on the one of its
 * GPUs where they hold most (its need is per GPU); the sum over all of
 * them in *total (may be NULL). */
uint64_t daemon_measure(const struct daemon *d, unsigned i, uint64_t *total);

/* Queues an event for the scheduler, applied after the actions being
 * carried out (never re-entrantly); its error text is copied. */
void daemon_post(struct daemon *d, const struct sched_event *e);

/* The model named name (not removed by a reload), or -1. */
int daemon_model_index(const struct daemon *d, const char *name);

#endif
