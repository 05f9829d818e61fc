/* The daemon's scheduler step (daemon/daemon.c) driven through a fake
 * table of its parts (daemon/daemonops.h): each action reaches the part
 * that carries it out, an asker hears back once, and an event a part
 * raises while an action runs is applied after it, never re-entrantly.
 * No process, socket or loop: the parts are these fakes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "daemon/daemon.h"
#include "daemon/daemonops.h"
#include "calllog.h"

#define GiB (1ULL << 30)

/* What the parts were asked, in order, as one line: "start m0; ..." */
static char calls[4096];
static int inside;       /* a fake part running now */
static bool reentered;   /* a part was called while another ran */
static int settles;      /* steps that ended */
static unsigned backlog; /* what waiting() says for every model */
static bool start_fails; /* start posts FAILED at once, as procs_start does without a port */

#define say(...) calllog_say(calls, sizeof calls, __VA_ARGS__)

static void enter(void)
{
    reentered |= inside > 0;
    inside++;
}

static void place(struct daemon *d)
{
    (void)d;
    enter();
    say("place");
    inside--;
}

static unsigned waiting(struct daemon *d, unsigned i)
{
    (void)d;
    (void)i;
    return backlog;
}

static void changed(struct daemon *d, unsigned i, enum sched_state was,
                    const struct sched_event *ev)
{
    (void)ev;
    enter();
    if (d->smodels[i].state != was)
        say("%s %s>%s", d->smodels[i].name, sched_state_name(was),
            sched_state_name(d->smodels[i].state));
    inside--;
}

static void start(struct daemon *d, unsigned i, int gpu)
{
    enter();
    say("start %s on %d", d->smodels[i].name, gpu);
    if (start_fails) {
        struct sched_event e = {.kind = SCHED_EV_FAILED, .model = i, .error = "no free port"};
        daemon_step(d, &e);
        /* queued, not applied: the step that called us is not done */
        assert_int_equal(d->smodels[i].state, SCHED_STARTING);
    }
    inside--;
}

static void stop(struct daemon *d, unsigned i)
{
    enter();
    say("stop %s", d->smodels[i].name);
    inside--;
}

static void move(struct daemon *d, unsigned i, bool resume, int gpu, uint64_t overlap, bool preempt)
{
    (void)overlap;
    (void)preempt;
    enter();
    say(resume ? "resume %s on %d" : "suspend %s", d->smodels[i].name, gpu);
    inside--;
}

static void stepped(struct daemon *d, uint64_t now_ms)
{
    (void)d;
    (void)now_ms;
    enter();
    inside--;
}

static void settled(struct daemon *d)
{
    enter();
    assert_false(d->stepping); /* after the step, its events all applied */
    settles++;
    inside--;
}

static const struct daemonops fakes = {
    .place = place,
    .waiting = waiting,
    .changed = changed,
    .start = start,
    .stop = stop,
    .move = move,
    .stepped = stepped,
    .settled = settled,
};

/* The askers: what each heard, as one line. */
static char heard[512];

static void granted(void *arg, unsigned model)
{
    size_t at = strlen(heard);
    snprintf(heard + at, sizeof heard - at, "%s%s granted m%u", at ? "; " : "", (char *)arg, model);
}

static void refused(void *arg, unsigned model, enum sched_refusal why, const char *text)
{
    (void)why;
    size_t at = strlen(heard);
    snprintf(heard + at, sizeof heard - at, "%s%s refused m%u (%s)", at ? "; " : "", (char *)arg,
             model, text);
}

static const struct demand_ops asker = {granted, refused};

/* A daemon of n models of need GiB each on one GPU of 16 GiB, all
 * stopped, its parts the fakes. */
static struct daemon *daemon_of(size_t n, const uint64_t *need)
{
    static struct daemon one; /* large; one test at a time */
    struct daemon *d = &one;
    memset(d, 0, sizeof *d);
    d->ops = &fakes;
    d->sched.models = d->smodels;
    d->sched.nmodels = n;
    d->sched.ngpus = 1;
    d->sched.gpus[0].capacity = 16 * GiB;
    d->sched.host_budget = 64 * GiB;
    d->sched.max_failures = 3;
    d->sched.backoff_ms = 1000;
    for (size_t i = 0; i < n; i++) {
        snprintf(d->smodels[i].name, sizeof d->smodels[i].name, "m%zu", i);
        d->smodels[i].need = need[i];
        d->smodels[i].priority = 5;
        d->smodels[i].keep_alive_ms = SCHED_FOREVER;
        d->smodels[i].gpu = d->smodels[i].resume_gpu = -1;
        d->dm[i].d = d;
        d->dm[i].index = (unsigned)i;
    }
    calls[0] = heard[0] = '\0';
    inside = settles = 0;
    reentered = start_fails = false;
    backlog = 0;
    return d;
}

static void event(struct daemon *d, enum sched_ev kind, unsigned model, uint64_t bytes)
{
    struct sched_event e = {.kind = kind, .model = model, .ok = true, .bytes = bytes};
    daemon_step(d, &e);
}

/* A demand for a stopped model: placement made current first, the
 * process started, the asker answered only once it is ready. */
static void demand_starts_then_grants(void **st)
{
    (void)st;
    const uint64_t need[] = {4 * GiB};
    struct daemon *d = daemon_of(1, need);
    uint64_t id = 0;
    assert_true(daemon_demand(d, 0, false, 60000, &asker, "api", &id, "vram load"));
    assert_true(id);
    assert_string_equal(calls, "place; m0 stopped>starting; start m0 on 0");
    assert_string_equal(heard, "");
    assert_int_equal(settles, 1);
    calls[0] = '\0';
    event(d, SCHED_EV_READY, 0, 4 * GiB);
    assert_string_equal(calls, "m0 starting>ready");
    assert_string_equal(heard, "api granted m0");
    assert_int_equal(settles, 2);
    assert_false(reentered);
}

/* An event a part raises while its action runs (a start that fails at
 * once) waits for the step that called it: applied after, in the same
 * step, never inside the part. */
static void events_raised_by_a_part_apply_after_it(void **st)
{
    (void)st;
    const uint64_t need[] = {4 * GiB};
    struct daemon *d = daemon_of(1, need);
    start_fails = true;
    assert_true(daemon_demand(d, 0, false, 60000, &asker, "api", NULL, "vram load"));
    /* a first failure: stopped, its demand still waiting for the retry */
    assert_string_equal(calls, "place; m0 stopped>starting; start m0 on 0; m0 starting>stopped");
    assert_int_equal(settles, 1); /* one step, both events */
    assert_false(reentered);
    assert_string_equal(d->smodels[0].error, "no free port");
}

/* No room for a second model: the first is moved out through the table,
 * and the second started once the move reports it done. */
static void room_made_by_a_move(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB};
    struct daemon *d = daemon_of(2, need);
    assert_true(daemon_demand(d, 0, false, 60000, &asker, "first", NULL, "vram load"));
    event(d, SCHED_EV_READY, 0, 10 * GiB);
    calls[0] = '\0';
    assert_true(daemon_demand(d, 1, false, 60000, &asker, "second", NULL, "vram load"));
    assert_string_equal(calls, "place; m0 ready>suspending; suspend m0");
    calls[0] = '\0';
    event(d, SCHED_EV_SUSPENDED, 0, 10 * GiB);
    assert_string_equal(calls, "m0 suspending>suspended; m1 stopped>starting; start m1 on 0");
    event(d, SCHED_EV_READY, 1, 10 * GiB);
    assert_string_equal(heard, "first granted m0; second granted m1");
    assert_false(reentered);
}

/* An unload stops the process through the table; its exit is the
 * scheduler's. */
static void unload_stops(void **st)
{
    (void)st;
    const uint64_t need[] = {4 * GiB};
    struct daemon *d = daemon_of(1, need);
    assert_true(daemon_demand(d, 0, false, 60000, &asker, "api", NULL, "vram load"));
    event(d, SCHED_EV_READY, 0, 4 * GiB);
    calls[0] = '\0';
    event(d, SCHED_EV_UNLOAD, 0, 0);
    assert_string_equal(calls, "m0 ready>stopping; stop m0");
    calls[0] = '\0';
    event(d, SCHED_EV_EXITED, 0, 0);
    assert_string_equal(calls, "m0 stopping>stopped");
}

/* An asker gone before its answer hears nothing, though its model comes
 * up; the next asker is answered. */
static void withdrawn_asker_hears_nothing(void **st)
{
    (void)st;
    const uint64_t need[] = {4 * GiB};
    struct daemon *d = daemon_of(1, need);
    uint64_t id = 0;
    assert_true(daemon_demand(d, 0, false, 60000, &asker, "gone", &id, "POST /v1/chat"));
    daemon_withdraw(d, 0, id);
    assert_true(daemon_demand(d, 0, false, 60000, &asker, "next", NULL, "POST /v1/chat"));
    event(d, SCHED_EV_READY, 0, 4 * GiB);
    assert_string_equal(heard, "next granted m0");
}

/* What waits in the proxy reaches the scheduler before each step (the
 * cost of a time slice). */
static void backlog_read_before_each_step(void **st)
{
    (void)st;
    const uint64_t need[] = {4 * GiB, 4 * GiB};
    struct daemon *d = daemon_of(2, need);
    backlog = 3;
    event(d, SCHED_EV_TICK, 0, 0);
    assert_int_equal(d->smodels[0].backlog, 3);
    assert_int_equal(d->smodels[1].backlog, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(demand_starts_then_grants),
        cmocka_unit_test(events_raised_by_a_part_apply_after_it),
        cmocka_unit_test(room_made_by_a_move),
        cmocka_unit_test(unload_stops),
        cmocka_unit_test(withdrawn_asker_hears_nothing),
        cmocka_unit_test(backlog_read_before_each_step),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
