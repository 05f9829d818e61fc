/* runloop: the loop's clock and signals: the tick (children reaped, the
 * scheduler's TICK), the one-shot wake when time alone changes a decision
 * sooner, the sampler's snapshots taken in (and the live state for the
 * dashboard), SIGCHLD, and SIGTERM/SIGINT: every model stopped, then the
 * loop ends. */
#include "daemon/runloop.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "app/log.h"
#include "app/render_json.h"
#include "daemon/api.h"
#include "daemon/events.h"
#include "daemon/loopwatch.h"
#include "daemon/procs.h"
#include "host/notify.h"
#include "probe/sampler.h"

#define TICK_MS 200
#define SNAP_MS 1000

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct daemon *d = arg;
    d->wake_at_ms = 0;
    struct sched_event e = {.kind = SCHED_EV_TICK};
    daemon_step(d, &e);
}

void runloop_wake(struct daemon *d)
{
    if (!d->base)
        return;
    if (!d->wake && !(d->wake = evtimer_new(d->base, on_wake, d)))
        return;
    uint64_t now = daemon_now_ms(), at = schedwhen_next_ms(&d->sched, now);
    if (at == SCHED_FOREVER || at - now >= TICK_MS) { /* the tick comes first */
        if (d->wake_at_ms)
            evtimer_del(d->wake);
        d->wake_at_ms = 0;
        return;
    }
    if (d->wake_at_ms == at)
        return;
    struct timeval tv = {0, (suseconds_t)((at - now) * 1000)};
    if (evtimer_add(d->wake, &tv) == 0)
        d->wake_at_ms = at;
}

/* The state for the event stream's live listeners (the dashboard): made
 * once a second from the snapshot just taken, whoever listens. */
static void live_state(struct daemon *d)
{
    if (!events_live_listeners(d->events))
        return;
    json_t *snap = render_json(&d->snap), *models = api_models_json(d);
    char *a = snap ? json_dumps(snap, JSON_COMPACT | RENDER_JSON_REALS) : NULL;
    char *b = models ? json_dumps(models, JSON_COMPACT | RENDER_JSON_REALS) : NULL;
    if (a && b)
        events_live(d->events, a, b);
    free(a);
    free(b);
    json_decref(snap);
    json_decref(models);
}

/* The sampler has a new snapshot. */
static void on_snapshot(void *arg)
{
    struct daemon *d = arg;
    loopwatch_begin("taking in a GPU snapshot");
    d->last_snap_ms = daemon_now_ms();
    procs_refresh(d);
    live_state(d);
    loopwatch_end();
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    struct daemon *d = arg;
    loopwatch_begin("the clock's tick");
    procs_reap(d);
    struct sched_event e = {.kind = SCHED_EV_TICK};
    daemon_step(d, &e);
    fflush(stderr);
    loopwatch_end();
    if (d->quitting && !procs_any_alive(d))
        event_base_loopbreak(d->base);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    struct daemon *d = arg;
    if (sig == SIGCHLD) {
        procs_reap(d);
        return;
    }
    if (d->quitting) { /* a second ^C: now */
        event_base_loopbreak(d->base);
        return;
    }
    log_msg(LOG_LV_NOTICE, "stopping the models, then exiting");
    notify_send("STOPPING=1");
    d->quitting = true;
    for (size_t i = 0; i < d->sched.nmodels; i++) {
        struct sched_event e = {.kind = SCHED_EV_UNLOAD, .model = (unsigned)i};
        daemon_step(d, &e);
    }
}

int runloop_run(struct daemon *d)
{
    static const int sigs[] = {SIGCHLD, SIGTERM, SIGINT}; /* SIGHUP: reload.c's */
    for (int k = 0; k < 3; k++) {
        d->sig[k] = evsignal_new(d->base, sigs[k], on_signal, d);
        if (!d->sig[k] || evsignal_add(d->sig[k], NULL) < 0)
            return -1;
    }
    signal(SIGPIPE, SIG_IGN);
    d->tick = event_new(d->base, -1, EV_PERSIST, on_tick, d);
    struct timeval tv = {0, TICK_MS * 1000};
    if (!d->tick || event_add(d->tick, &tv) < 0 || loopwatch_start(d->base) < 0)
        return -1;
    /* from now on the probe is the sampler's, on its thread */
    d->sampler = sampler_start(d->base, d->probe, SNAP_MS, on_snapshot, d);
    if (!d->sampler)
        return -1;
    int rc = event_base_dispatch(d->base);
    sampler_stop(d->sampler);
    d->sampler = NULL;
    return rc;
}
