/* worker: suspends and resumes off the loop. One takes from a tenth of a
 * second (fast swap) to seconds (the driver's checkpoint moved 16 GiB out
 * in 8.6 s on an H200), so each runs on a thread of its own, by the path
 * move.c picks, and its report comes back to the loop through a pipe. */
#ifndef VRAM_MOVE_WORKER_H
#define VRAM_MOVE_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc/swapline.h"

struct event_base;
struct ckpt;

#define WORKER_MAX_PIDS 16

/* What a job does: move a model out or back (resume says which), or hand
 * its main process chunks of host memory to pin ahead (prepare), or take
 * them back (drop), or move a suspended one's bytes from host memory to
 * its spill file (spill: the disk tier). */
enum worker_chore { WORKER_MOVE, WORKER_PREPARE, WORKER_DROP, WORKER_SPILL };

struct worker_job {
    unsigned model;
    enum worker_chore chore;
    bool resume;
    /* its processes that hold GPU memory (a worker per GPU, or the server
     * alone), moved together: all, or none */
    pid_t pids[WORKER_MAX_PIDS];
    uint64_t bytes[WORKER_MAX_PIDS]; /* what each holds: its part of the pool window */
    unsigned npids;
    bool driver_only;            /* skip fast swap */
    char from[96], to[96];       /* resume onto another GPU: the UUIDs (driver path only) */
    /* suspend and prepare: chunks of the daemon's host memory to send, the
     * first nfds_of[0] to pids[0], the next nfds_of[1] to pids[1]... */
    int fds[WORKER_MAX_PIDS * SWAPLINE_MAX_CHUNKS];
    unsigned nfds_of[WORKER_MAX_PIDS];
    uint64_t floor;              /* resume overlapped: the free memory it must leave; 0: not */
    bool keep;                   /* resume: its chunks stay with it, readied for the next suspend */
    bool fast_only;              /* suspend mid-request (preempted): no driver checkpoint */
    /* suspend of one process, and spill: a file of the spill folder for it
     * (-1: none; a spill without one writes to the file it holds) and how
     * much it may take */
    int spill_fd;
    uint64_t spill_max;
    uint64_t spill_bytes; /* spill: at least this much of its host memory goes down; 0: all */
};

struct worker_report {
    unsigned model;
    enum worker_chore chore;
    bool resume, ok;
    bool fast;      /* moved by fast swap: it comes back only on the GPU it left */
    uint64_t bytes; /* what fast swap moved */
    uint64_t held;  /* suspend of one process: the bytes of chunks it kept */
    bool keep;      /* resume: asked to keep its chunks ready for the next suspend */
    uint64_t pin_ms; /* a prepare: how long the process took to pin its chunks */
    uint64_t disk;    /* a suspend or spill of one process: the bytes in its spill file */
    uint64_t disk_ms; /* ... and how long writing them took */
    char error[232];
    char note[240]; /* why fast swap did not move a process it could have */
};

/* How a job moves a process: move_suspend/move_resume in the daemon; tests
 * put their own. Runs on the job's thread; fills r->ok, r->fast, r->error. */
typedef void (*worker_run_fn)(void *arg, const struct worker_job *j, struct worker_report *r);

struct worker;

/* Reports go to done, on the loop's thread. */
struct worker *worker_new(struct event_base *base, worker_run_fn run, void *run_arg,
                          void (*done)(void *arg, const struct worker_report *r), void *arg);

/* Only once no job runs (their reports would have nowhere to go). */
void worker_free(struct worker *w);

/* Runs j on a thread of its own: 0, or -1 with err (no thread). */
int worker_start(struct worker *w, const struct worker_job *j, char *err, size_t len);

#endif
