/* daemon: `vram serve`'s shared state, for the files of src/daemon/: the
 * configuration, the scheduler's table, each model's process, the
 * listeners, the requests waiting on the scheduler. One thread runs it
 * all (libevent); checkpoint calls, which block for seconds, run on worker
 * threads that report back through a pipe (worker.c). */
#ifndef VRAM_DAEMON_DAEMON_H
#define VRAM_DAEMON_DAEMON_H

#include <event2/event.h>
#include <event2/http.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/config.h"
#include "core/sched.h"
#include "core/snapshot.h"

#define DAEMON_MAX_PENDING 512
#define DAEMON_MAX_SSE     32

struct daemon;

struct dmodel {
    struct daemon *d; /* for callbacks: the daemon and this model's index */
    unsigned index;
    struct config_model cfg;
    bool removed;     /* gone from the configuration: stopped, then ignored */
    bool reconfigure; /* changed by a reload while busy: restarted once idle */
    pid_t pid;
    uint64_t start; /* its start time in ticks */
    bool child;     /* ours to reap; adopted ones are polled */
    unsigned port;
    uint64_t began_ms; /* when the current start, suspend or resume began */
    uint64_t deadline_ms;
    struct event *timer; /* health polls while starting; the kill after a grace period */
    char how[16];        /* how it was last suspended */
    int left_gpu;        /* the GPU a suspended model left, for the restore's remapping */
    uint64_t host_bytes;
    unsigned restarts, starts, suspends, resumes;
    /* the proxy's: requests in flight, those over the concurrency limit,
     * idle keep-alive connections to the model */
    unsigned inflight;
    struct preq *waiting, *waiting_tail;
    struct relay_conn *idle[64];
    unsigned nidle;
    double last_start_s, last_suspend_s, last_resume_s;
};

enum pending_kind { PENDING_DEMAND, PENDING_STATE, PENDING_PROXY };

struct preq;
struct relay_conn;

struct pending {
    uint64_t id;
    struct evhttp_request *req; /* NULL: the client left */
    struct evhttp_connection *conn;
    enum pending_kind kind;
    unsigned model;
    enum sched_state want; /* for PENDING_STATE: reply when the model gets here */
    uint64_t lease_ms;     /* for an acquire: how long the hold lasts */
    uint64_t deadline_ms;  /* for PENDING_STATE: when to give up */
    struct preq *proxy;    /* for PENDING_PROXY: the proxied request */
};

struct daemon {
    struct event_base *base;
    struct config cfg;
    struct sched sched;
    struct sched_model smodels[CONFIG_MAX_MODELS];
    struct dmodel dm[CONFIG_MAX_MODELS];
    struct store *store;
    struct probe *probe;
    struct ckpt *ckpt; /* NULL: suspend falls back to stop */
    char ckpt_why[256];
    struct snap snap;
    char gpu_uuid[SCHED_MAX_GPUS][96];
    char gpu_name[SCHED_MAX_GPUS][96];
    struct evhttp *http, *metrics;
    struct pending pending[DAEMON_MAX_PENDING];
    size_t npending;
    uint64_t next_id;
    struct evhttp_request *sse[DAEMON_MAX_SSE];
    struct evhttp_connection *sse_conn[DAEMON_MAX_SSE];
    size_t nsse;
    int worker_fd[2];
    struct event *worker_ev, *tick, *sig[4];
    /* events raised while actions run, applied after them in order */
    struct sched_event evq[64];
    char evq_err[64][232];
    size_t evq_head, evq_n;
    bool stepping;
    char shim[1024];
    uint64_t last_snap_ms;
    bool quitting;
};

/* setup.c: building the daemon from its configuration, adopting what a
 * previous one left running, reloading on SIGHUP */
int daemon_run(const char *config_path, char *err, size_t len);
void daemon_reload(struct daemon *d);

/* daemon.c */
uint64_t daemon_now_ms(void);
int daemon_loop(struct daemon *d);
/* A new snapshot: memory used by others per GPU; adopted models that died. */
void daemon_refresh(struct daemon *d);
void daemon_init_model_timer(struct daemon *d, unsigned i);
/* Feeds one event to the scheduler and carries out what it decides. */
void daemon_step(struct daemon *d, const struct sched_event *e);
int daemon_model_index(const struct daemon *d, const char *name);
void daemon_emit(struct daemon *d, unsigned model, const char *kind, double seconds,
                 const char *detail);

/* api.c */
int api_listen(struct daemon *d, char *err, size_t len);
void api_grant(struct daemon *d, uint64_t id, unsigned model);
/* Parks req until the scheduler decides (503 and NULL when too many wait). */
struct pending *api_park(struct daemon *d, struct evhttp_request *req, enum pending_kind kind,
                         unsigned model);
void api_refuse(struct daemon *d, uint64_t id, const char *why);
/* Replies to requests waiting for a model to reach a state. */
void api_states_changed(struct daemon *d, uint64_t now_ms);
/* An event to every client of /v1/events. */
void api_event(struct daemon *d, unsigned model, const char *kind, double seconds,
               const char *detail);
struct json_t;
struct json_t *api_model_json(const struct daemon *d, unsigned i);

/* proxy.c: one address for every model */
int proxy_listen(struct daemon *d, char *err, size_t len);
void proxy_granted(struct daemon *d, struct preq *p, unsigned model);
void proxy_refused(struct daemon *d, struct preq *p, const char *why, bool failed);
/* The model's process is gone: its pooled connections go too. */
void proxy_forget_model(struct daemon *d, unsigned model);

/* worker.c: suspend and resume off the loop */
int worker_init(struct daemon *d);
void worker_suspend(struct daemon *d, unsigned model);
void worker_resume(struct daemon *d, unsigned model, int gpu);

/* metrics.c */
char *metrics_render(const struct daemon *d);

#endif
