/* The scheduler on scripted sequences: what it starts, whom it evicts and
 * in which order, that it never commits more than a GPU holds, and what a
 * waiting client is told. */
#include <string.h>

#include "core/schedwhen.h"
#include "sched_fixture.h"

/* Two 6 GiB models fill 16 GiB; a third evicts the lowest priority, and
 * starts only once that one is suspended. */
static void eviction_by_priority_then_lru(void **st)
{
    (void)st;
    const uint64_t need[] = {6 * GiB, 6 * GiB, 6 * GiB, 6 * GiB};
    const int prio[] = {5, 1, 5, 5};
    setup_models(4, need, prio);
    bring_up(0, 1000);
    bring_up(1, 2000);
    demand(2, 7, true, 3000);
    assert_null(find(SCHED_ACT_START, 2)); /* no room yet */
    const struct sched_action *v = find(SCHED_ACT_SUSPEND, 1);
    assert_non_null(v); /* priority 1 goes first, though used last */
    assert_null(find(SCHED_ACT_SUSPEND, 0));
    assert_int_equal(models[1].state, SCHED_SUSPENDING);
    step((struct sched_event){.kind = SCHED_EV_TICK}, 3100);
    assert_null(find(SCHED_ACT_SUSPEND, 0)); /* no second round of victims */
    step((struct sched_event){.kind = SCHED_EV_SUSPENDED, .model = 1, .ok = true, .bytes = 6 * GiB},
         3200);
    assert_non_null(find(SCHED_ACT_START, 2));
    step((struct sched_event){.kind = SCHED_EV_READY, .model = 2}, 3300);
    assert_non_null(find(SCHED_ACT_GRANT, 2));
    assert_int_equal(models[2].state, SCHED_BUSY);
    /* now m3: m0 (prio 5, used at 1020) is idle; m2 is busy: m0 goes */
    demand(3, 8, false, 4000);
    assert_non_null(find(SCHED_ACT_SUSPEND, 0));
    assert_null(find(SCHED_ACT_SUSPEND, 2));
}

/* Equal priorities: the least recently used goes. Pinned ones never. */
static void lru_and_pinned(void **st)
{
    (void)st;
    const uint64_t need[] = {5 * GiB, 5 * GiB, 5 * GiB, 5 * GiB};
    setup_models(4, need, NULL);
    models[0].pinned = true;
    bring_up(0, 1000);
    bring_up(1, 2000);
    bring_up(2, 3000);
    demand(1, 9, false, 3500); /* m1 used again: m2 is now the least recent */
    demand(3, 10, false, 4000);
    assert_non_null(find(SCHED_ACT_SUSPEND, 2));
    assert_null(find(SCHED_ACT_SUSPEND, 0));
    assert_null(find(SCHED_ACT_SUSPEND, 1));
}

/* Concurrent demands for a starting model share one start. */
static void one_start_for_many_demands(void **st)
{
    (void)st;
    const uint64_t need[] = {4 * GiB};
    setup_models(1, need, NULL);
    demand(0, 1, true, 0);
    assert_non_null(find(SCHED_ACT_START, 0));
    demand(0, 2, true, 1);
    demand(0, 3, false, 2);
    assert_null(find(SCHED_ACT_START, 0));
    step((struct sched_event){.kind = SCHED_EV_READY, .model = 0, .bytes = 3 * GiB}, 50);
    assert_int_equal(NA, 3);
    for (size_t i = 0; i < NA; i++)
        assert_int_equal(A[i].kind, SCHED_ACT_GRANT);
    assert_int_equal(models[0].holds, 2);
    assert_int_equal(models[0].need, 3 * GiB); /* what it really used */
}

/* An eviction says why, as data: for which model and its oldest demand,
 * what it needed and what was free, how many could have gone. */
static void eviction_says_why(void **st)
{
    (void)st;
    const uint64_t need[] = {6 * GiB, 6 * GiB, 6 * GiB};
    const int prio[] = {5, 1, 5};
    setup_models(3, need, prio);
    bring_up(0, 1000);
    bring_up(1, 2000);
    assert_int_equal(models[0].out.why, SCHED_OUT_NONE);
    demand(2, 7, true, 3000);
    const struct sched_out *o = &models[1].out;
    assert_int_equal(o->why, SCHED_OUT_ROOM);
    assert_int_equal(o->for_model, 2);
    assert_int_equal(o->for_demand, 7);
    assert_int_equal(o->gpu, 0);
    assert_int_equal(o->need, 6 * GiB);
    assert_int_equal(o->free, 4 * GiB); /* 16 GiB, 12 held */
    assert_int_equal(o->candidates, 2);
    assert_false(o->stopped);
    assert_int_equal(models[0].out.why, SCHED_OUT_NONE); /* spared */
    /* asked: an unload says no reason */
    step((struct sched_event){.kind = SCHED_EV_UNLOAD, .model = 0}, 3100);
    assert_int_equal(models[0].out.why, SCHED_OUT_NONE);
}

/* A demand that times out while its model starts (the GPU had room) says
 * so, not that it waited for memory. */
static void slow_start_is_no_memory_wait(void **st)
{
    (void)st;
    const uint64_t need[] = {1 * GiB};
    setup_models(1, need, NULL);
    step((struct sched_event){.kind = SCHED_EV_DEMAND, .model = 0, .id = 9, .deadline_ms = 8000},
         0);
    assert_non_null(find(SCHED_ACT_START, 0));
    step((struct sched_event){.kind = SCHED_EV_TICK}, 8001);
    const struct sched_action *r = find(SCHED_ACT_REFUSE, 0);
    assert_non_null(r);
    assert_non_null(strstr(r->why, "timed out waiting for it to start"));
    assert_non_null(strstr(r->why, "within 8 s (the GPU had room)"));
    assert_null(strstr(r->why, "of GPU memory"));
}

/* Memory used by others counts; a demand that cannot be met times out
 * with the reason; idle time protects a model from eviction. */
static void foreign_memory_and_timeouts(void **st)
{
    (void)st;
    const uint64_t need[] = {8 * GiB, 8 * GiB};
    setup_models(2, need, NULL);
    S.gpus[0].foreign = 6 * GiB; /* a desktop and someone's notebook */
    models[0].pinned = true;
    bring_up(0, 0);
    demand(1, 5, false, 1000);
    assert_null(find(SCHED_ACT_START, 1));
    assert_null(find(SCHED_ACT_SUSPEND, 0)); /* pinned: never evicted */
    step((struct sched_event){.kind = SCHED_EV_TICK}, 61001);
    const struct sched_action *r = find(SCHED_ACT_REFUSE, 1);
    assert_non_null(r);
    assert_non_null(strstr(r->why, "timed out waiting for 8.00 GiB"));
    assert_int_equal(r->refusal, SCHED_REFUSED_TIMEOUT); /* 503: try again */
    assert_int_equal(S.nqueue, 0);
}

/* Host RAM for suspended models is bounded: past it, victims are stopped. */
static void host_budget_stops_instead(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB};
    setup_models(2, need, NULL);
    S.host_budget = 4 * GiB;
    bring_up(0, 0);
    demand(1, 5, false, 1000);
    assert_non_null(find(SCHED_ACT_STOP, 0));
    assert_null(find(SCHED_ACT_SUSPEND, 0));
    step((struct sched_event){.kind = SCHED_EV_EXITED, .model = 0}, 1100);
    assert_int_equal(models[0].state, SCHED_STOPPED);
    assert_non_null(find(SCHED_ACT_START, 1));
}

/* The stop says why: its action carries the figures a log line needs
 * (before, a model evicted by a stop left no word of why). */
static void host_budget_stop_says_why(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB};
    setup_models(2, need, NULL);
    S.host_budget = 4 * GiB;
    bring_up(0, 0);
    demand(1, 5, false, 1000);
    const struct sched_action *a = find(SCHED_ACT_STOP, 0);
    assert_non_null(a);
    assert_non_null(strstr(a->why, "no room to suspend it"));
    assert_non_null(strstr(a->why, "host_budget and spill_budget"));
}

/* The disk tier below host memory: a model host_budget cannot hold is
 * suspended all the same, its bytes going where there is room. */
static void spill_budget_suspends_past_host(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB};
    setup_models(2, need, NULL);
    S.host_budget = 4 * GiB;
    S.spill_budget = 100 * GiB;
    bring_up(0, 0);
    demand(1, 5, false, 1000);
    assert_non_null(find(SCHED_ACT_SUSPEND, 0));
    assert_null(find(SCHED_ACT_STOP, 0));
}

/* A command that cannot start: retried with a growing backoff, then
 * failed, and its waiting demands are told why; no retry after that. */
static void failing_model_is_not_retried_forever(void **st)
{
    (void)st;
    const uint64_t need[] = {2 * GiB};
    setup_models(1, need, NULL);
    demand(0, 1, false, 0);
    assert_non_null(find(SCHED_ACT_START, 0));
    step((struct sched_event){.kind = SCHED_EV_FAILED, .model = 0, .error = "no such file"}, 10);
    assert_null(find(SCHED_ACT_START, 0)); /* backoff */
    step((struct sched_event){.kind = SCHED_EV_TICK}, 1010);
    assert_non_null(find(SCHED_ACT_START, 0));
    step((struct sched_event){.kind = SCHED_EV_FAILED, .model = 0, .error = "no such file"}, 1020);
    step((struct sched_event){.kind = SCHED_EV_TICK}, 2020);
    assert_null(find(SCHED_ACT_START, 0)); /* the second wait is twice as long */
    step((struct sched_event){.kind = SCHED_EV_TICK}, 3020);
    assert_non_null(find(SCHED_ACT_START, 0));
    step((struct sched_event){.kind = SCHED_EV_FAILED, .model = 0, .error = "no such file"}, 3030);
    const struct sched_action *r = find(SCHED_ACT_REFUSE, 0);
    assert_non_null(r);
    assert_non_null(strstr(r->why, "failed 3 times, last: no such file"));
    assert_int_equal(r->refusal, SCHED_REFUSED_FAILED); /* 502: the backend's fault */
    assert_int_equal(models[0].state, SCHED_FAILED);
    step((struct sched_event){.kind = SCHED_EV_TICK}, 100000);
    assert_int_equal(NA, 0);
    demand(0, 2, false, 100001);
    assert_non_null(find(SCHED_ACT_REFUSE, 0)); /* told at once */
}

/* A crash of a ready model restarts it; an explicit resume goes to the GPU
 * asked for; a resume that fails leaves it suspended and says so. */
static void crash_restart_and_resume_elsewhere(void **st)
{
    (void)st;
    const uint64_t need[] = {6 * GiB};
    setup_models(1, need, NULL);
    S.ngpus = 2;
    S.gpus[1].capacity = 16 * GiB;
    bring_up(0, 0);
    int first = models[0].gpu;
    step((struct sched_event){.kind = SCHED_EV_EXITED, .model = 0, .error = "killed"}, 100);
    assert_int_equal(models[0].state, SCHED_STOPPED);
    step((struct sched_event){.kind = SCHED_EV_TICK}, 1100);
    assert_non_null(find(SCHED_ACT_START, 0));
    step((struct sched_event){.kind = SCHED_EV_READY, .model = 0}, 1200);
    step((struct sched_event){.kind = SCHED_EV_SUSPEND, .model = 0}, 1300);
    assert_non_null(find(SCHED_ACT_SUSPEND, 0));
    step((struct sched_event){.kind = SCHED_EV_SUSPENDED, .model = 0, .ok = true}, 1400);
    int other = first == 0 ? 1 : 0;
    step((struct sched_event){.kind = SCHED_EV_RESUME, .model = 0, .gpu = other}, 1500);
    const struct sched_action *r = find(SCHED_ACT_RESUME, 0);
    assert_non_null(r);
    assert_int_equal(r->gpu, other);
    step(
        (struct sched_event){
            .kind = SCHED_EV_RESUMED, .model = 0, .ok = false, .error = "out of memory"},
        1600);
    assert_int_equal(models[0].state, SCHED_SUSPENDED);
    assert_non_null(strstr(models[0].error, "resume failed: out of memory"));
}

/* A model fast swap suspended comes back only on the GPU it left: a
 * demand waits for room there (evicting there) rather than take the other
 * GPU's free room, and an explicit resume elsewhere is held to it too. */
static void fast_swapped_comes_back_where_it_left(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB};
    setup_models(2, need, NULL);
    S.ngpus = 2;
    S.gpus[1].capacity = 16 * GiB;
    models[0].allowed = 1u << 0;
    bring_up(0, 0);
    step((struct sched_event){.kind = SCHED_EV_SUSPEND, .model = 0}, 100);
    step((struct sched_event){.kind = SCHED_EV_SUSPENDED, .model = 0, .ok = true, .bound = true},
         200);
    assert_int_equal(models[0].bound, 1u << 0);
    models[0].allowed = 0; /* a reload lifted its pin: the binding still holds */
    models[1].allowed = 1u << 0;
    bring_up(1, 300);
    assert_int_equal(models[1].gpu, 0);
    /* GPU 1 is empty, but model 0 must come back to GPU 0: m1 goes */
    step((struct sched_event){.kind = SCHED_EV_RESUME, .model = 0, .gpu = 1}, 400);
    if (!find(SCHED_ACT_SUSPEND, 1))
        demand(0, 7, false, 500);
    assert_null(find(SCHED_ACT_RESUME, 0));
    assert_non_null(find(SCHED_ACT_SUSPEND, 1));
    step((struct sched_event){.kind = SCHED_EV_SUSPENDED, .model = 1, .ok = true}, 600);
    const struct sched_action *r = find(SCHED_ACT_RESUME, 0);
    assert_non_null(r);
    assert_int_equal(r->gpu, 0);
    step((struct sched_event){.kind = SCHED_EV_RESUMED, .model = 0, .ok = true}, 700);
    assert_int_equal(models[0].bound, 0);
}


/* Pressure evicts at once: a model nobody is using goes the moment
 * another needs its room, however long its keep-alive. */
static void pressure_evicts_at_once(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB};
    setup_models(2, need, NULL);
    S.min_resident_ms = 1000;
    models[0].keep_alive_ms = 5 * 60 * 1000;
    bring_up(0, 0);
    demand(1, 7, false, 2000);
    assert_non_null(find(SCHED_ACT_SUSPEND, 0));
    step((struct sched_event){.kind = SCHED_EV_SUSPENDED, .model = 0, .ok = true}, 2100);
    assert_non_null(find(SCHED_ACT_START, 1));
}

/* ... but not a model that has just arrived: two hot models would
 * otherwise take turns forever. After min_resident it may go. */
static void min_residency_against_thrash(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB};
    setup_models(2, need, NULL);
    S.min_resident_ms = 1000;
    bring_up(0, 0); /* ready at 10 */
    demand(1, 7, false, 500);
    assert_null(find(SCHED_ACT_SUSPEND, 0));
    step((struct sched_event){.kind = SCHED_EV_TICK}, 900);
    assert_null(find(SCHED_ACT_SUSPEND, 0));
    step((struct sched_event){.kind = SCHED_EV_TICK}, 1010);
    assert_non_null(find(SCHED_ACT_SUSPEND, 0));
}

/* min_resident = auto (the default): a model is spared as long as its own
 * switch takes, so a fast-swapped model (300 ms) keeps a waiter 300 ms
 * at most, where a model never moved yet is spared the second. */
static void min_residency_auto_is_the_switch(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB};
    setup_models(2, need, NULL);
    S.min_resident_auto = true;
    S.min_resident_ms = 5000; /* not used when auto */
    models[0].switch_ms = 300;
    bring_up(0, 0); /* ready at 10 */
    demand(1, 7, false, 200);
    assert_null(find(SCHED_ACT_SUSPEND, 0));
    assert_int_equal(schedwhen_next_ms(&S, 200), 310);
    step((struct sched_event){.kind = SCHED_EV_TICK}, 310);
    assert_non_null(find(SCHED_ACT_SUSPEND, 0));

    setup_models(2, need, NULL);
    S.min_resident_auto = true;
    bring_up(0, 0);
    demand(1, 7, false, 500);
    step((struct sched_event){.kind = SCHED_EV_TICK}, 900);
    assert_null(find(SCHED_ACT_SUSPEND, 0));
    step((struct sched_event){.kind = SCHED_EV_TICK}, 1010);
    assert_non_null(find(SCHED_ACT_SUSPEND, 0));
}

/* The next moment time alone changes a decision, for the daemon to step
 * then rather than at its next tick: a waiter's victim turning
 * min_resident old, a keep-alive's end, a demand's deadline; nothing due,
 * nothing. */
static void next_wake(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB};
    setup_models(2, need, NULL);
    S.min_resident_ms = 1000;
    bring_up(0, 0); /* ready at 10 */
    assert_true(schedwhen_next_ms(&S, 100) == SCHED_FOREVER); /* nobody waits, keep-alive forever */
    step((struct sched_event){.kind = SCHED_EV_DEMAND, .model = 1, .id = 7, .deadline_ms = 9000},
         500);
    assert_null(find(SCHED_ACT_SUSPEND, 0));
    uint64_t at = schedwhen_next_ms(&S, 500);
    assert_int_equal(at, models[0].resident_ms + 1000);
    step((struct sched_event){.kind = SCHED_EV_TICK}, at); /* then, not a tick later */
    assert_non_null(find(SCHED_ACT_SUSPEND, 0));
    /* m0 leaving, m1 to come: the demand's deadline is what is left */
    assert_int_equal(schedwhen_next_ms(&S, at), 9000);
    assert_true(schedwhen_next_ms(&S, 9000) == SCHED_FOREVER); /* never now or before */

    setup_models(2, need, NULL);
    models[0].keep_alive_ms = 5000;
    bring_up(0, 0);
    assert_int_equal(schedwhen_next_ms(&S, 100), schedwhen_expires(&S, 0));
}

/* Keep-alive gives memory back with no one asking: suspended (or
 * stopped, per evict) once unused that long; pinned and forever stay. */
static void keep_alive_without_pressure(void **st)
{
    (void)st;
    const uint64_t need[] = {2 * GiB, 2 * GiB, 2 * GiB, 2 * GiB};
    setup_models(4, need, NULL);
    models[0].keep_alive_ms = 5000;
    models[1].keep_alive_ms = 5000;
    models[1].evict = SCHED_EVICT_STOP;
    models[2].keep_alive_ms = 5000;
    models[2].pinned = true;
    for (unsigned m = 0; m < 4; m++)
        bring_up(m, 0); /* released at 20 */
    assert_int_equal(schedwhen_expires(&S, 0), 5020);
    assert_true(schedwhen_expires(&S, 3) == SCHED_FOREVER);
    step((struct sched_event){.kind = SCHED_EV_TICK}, 5000);
    assert_int_equal(NA, 0);
    step((struct sched_event){.kind = SCHED_EV_TICK}, 5020);
    assert_non_null(find(SCHED_ACT_SUSPEND, 0));
    assert_non_null(find(SCHED_ACT_STOP, 1));
    assert_int_equal(NA, 2);
    step((struct sched_event){.kind = SCHED_EV_TICK}, 10 * 3600 * 1000ULL);
    assert_int_equal(NA, 0); /* the pinned one and the forever one stay */
}

/* A request's own keep-alive (Ollama's "keep_alive"): 0 evicts the model
 * as soon as that answer is done, forever keeps it past its default. */
static void request_keep_alive(void **st)
{
    (void)st;
    const uint64_t need[] = {2 * GiB, 2 * GiB};
    setup_models(2, need, NULL);
    models[0].keep_alive_ms = models[1].keep_alive_ms = 5000;
    demand(0, 1, true, 0);
    step((struct sched_event){.kind = SCHED_EV_READY, .model = 0}, 10);
    demand(0, 2, true, 20); /* two requests at once */
    step((struct sched_event){.kind = SCHED_EV_RELEASE, .model = 0, .keep_set = true}, 30);
    assert_null(find(SCHED_ACT_SUSPEND, 0)); /* the other is still being answered */
    step((struct sched_event){.kind = SCHED_EV_RELEASE, .model = 0, .keep_set = true}, 40);
    assert_non_null(find(SCHED_ACT_SUSPEND, 0));
    bring_up(1, 100);
    step((struct sched_event){.kind = SCHED_EV_DEMAND, .model = 1, .id = 9, .hold = true,
                              .deadline_ms = 60000},
         200);
    step((struct sched_event){.kind = SCHED_EV_RELEASE, .model = 1, .keep_set = true,
                              .keep_ms = SCHED_FOREVER},
         210);
    step((struct sched_event){.kind = SCHED_EV_TICK}, 3600 * 1000);
    assert_null(find(SCHED_ACT_SUSPEND, 1));
    /* the next request without one brings the default back */
    demand(1, 10, true, 3600 * 1000);
    step((struct sched_event){.kind = SCHED_EV_RELEASE, .model = 1}, 3600 * 1000 + 10);
    step((struct sched_event){.kind = SCHED_EV_TICK}, 3600 * 1000 + 5010);
    assert_non_null(find(SCHED_ACT_SUSPEND, 1));
}

/* budget is what models may hold together; memory of processes vram does
 * not manage counts only against what the GPU itself can hold. */
static void budget_is_for_models(void **st)
{
    (void)st;
    const uint64_t need[] = {8 * GiB, 3 * GiB, 2 * GiB};
    setup_models(3, need, NULL);
    S.gpus[0].budget = 10 * GiB;
    S.gpus[0].foreign = 5 * GiB; /* 11 GiB of the 16 left */
    models[0].pinned = models[1].pinned = models[2].pinned = true;
    demand(0, 1, false, 0);
    assert_non_null(find(SCHED_ACT_START, 0)); /* 8 <= min(11, 10) */
    step((struct sched_event){.kind = SCHED_EV_READY, .model = 0}, 10);
    demand(1, 2, false, 20);
    assert_null(find(SCHED_ACT_START, 1)); /* 3 > the 2 left of the budget */
    demand(2, 3, false, 30);
    assert_non_null(find(SCHED_ACT_START, 2)); /* 2 fits both */
}

/* Overlap: a model fast swap moved out comes back while the one making
 * room is still moving out (PCIe carries both ways at once); what is
 * leaving is promised once, so a third model waits for what is really
 * free. */
static void overlapped_switch(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB, 4 * GiB};
    setup_models(3, need, NULL);
    S.overlap = true;
    bring_up(1, 0);
    step((struct sched_event){.kind = SCHED_EV_SUSPEND, .model = 1}, 100);
    step((struct sched_event){.kind = SCHED_EV_SUSPENDED, .model = 1, .ok = true, .bound = true},
         200);
    bring_up(0, 300);
    demand(1, 8, false, 400);
    assert_non_null(find(SCHED_ACT_SUSPEND, 0));
    const struct sched_action *r = find(SCHED_ACT_RESUME, 1);
    assert_non_null(r); /* in the same step, not after model 0 is out */
    assert_int_equal(r->gpu, 0);
    assert_true(r->overlap == 10 * GiB);
    demand(2, 9, false, 410);
    assert_null(find(SCHED_ACT_START, 2)); /* 6 GiB will be left, none now */
    assert_null(find(SCHED_ACT_SUSPEND, 1)); /* nor is the arriving one a victim */
    step((struct sched_event){.kind = SCHED_EV_SUSPENDED, .model = 0, .ok = true, .bound = true},
         700);
    assert_non_null(find(SCHED_ACT_START, 2));
    step((struct sched_event){.kind = SCHED_EV_RESUMED, .model = 1, .ok = true}, 720);
    assert_non_null(find(SCHED_ACT_GRANT, 1));
}

/* A suspended model unloaded holds no room on the GPU it left while its
 * process stops: a model that needs that room starts at once. */
static void unloaded_while_out_holds_no_room(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB};
    setup_models(2, need, NULL);
    bring_up(0, 0);
    step((struct sched_event){.kind = SCHED_EV_SUSPEND, .model = 0}, 100);
    assert_non_null(find(SCHED_ACT_SUSPEND, 0));
    step((struct sched_event){.kind = SCHED_EV_SUSPENDED, .model = 0, .ok = true, .bound = true},
         200);
    step((struct sched_event){.kind = SCHED_EV_UNLOAD, .model = 0}, 300);
    assert_non_null(find(SCHED_ACT_STOP, 0));
    demand(1, 7, false, 400);
    assert_non_null(find(SCHED_ACT_START, 1));
}

/* ---- models over several GPUs ---- */

static uint32_t gpus_of(unsigned m)
{
    return models[m].gpus;
}

/* A model over 2 GPUs and one over 4 on an 8-GPU server: each is placed
 * whole, on GPUs with room, or not at all; each GPU counts its share. */
static void spans_all_or_none(void **st)
{
    (void)st;
    const uint64_t need[] = {60 * GiB, 60 * GiB, 100 * GiB, 30 * GiB};
    setup_models(4, need, NULL);
    S.ngpus = 8;
    for (int g = 0; g < 8; g++)
        S.gpus[g].capacity = 140 * GiB;
    models[0].width = 2;
    models[1].width = 4;
    models[2].width = 8;
    bring_up(0, 0);
    assert_int_equal(__builtin_popcount(gpus_of(0)), 2);
    bring_up(1, 100);
    assert_int_equal(__builtin_popcount(gpus_of(1)), 4);
    assert_int_equal(gpus_of(0) & gpus_of(1), 0); /* the emptiest GPUs first */
    for (int g = 0; g < 8; g++)
        assert_true(sched_committed(&S, g) == ((gpus_of(0) | gpus_of(1)) >> g & 1 ? 60 * GiB : 0));
    /* 8 GPUs of 100 GiB: only by evicting both; they hold no request: they go */
    demand(2, 7, false, 5000);
    assert_non_null(find(SCHED_ACT_SUSPEND, 0));
    assert_non_null(find(SCHED_ACT_STOP, 1)); /* the host budget holds one of them */
    assert_null(find(SCHED_ACT_START, 2)); /* not half-placed meanwhile */
    step((struct sched_event){.kind = SCHED_EV_SUSPENDED, .model = 0, .ok = true}, 5100);
    assert_null(find(SCHED_ACT_START, 2));
    step((struct sched_event){.kind = SCHED_EV_EXITED, .model = 1}, 5200);
    assert_non_null(find(SCHED_ACT_START, 2));
    assert_int_equal(gpus_of(2), 0xff);
}

/* A list pins the GPUs; a model that cannot get all of them waits, and
 * what it waits for is not given to a smaller model meanwhile. */
static void listed_gpus_and_claims(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB, 10 * GiB};
    setup_models(3, need, NULL);
    S.ngpus = 4;
    for (int g = 0; g < 4; g++)
        S.gpus[g].capacity = 16 * GiB;
    models[0].allowed = 1u << 1;
    models[1].allowed = (1u << 1) | (1u << 2);
    models[1].width = 2;
    models[2].allowed = 1u << 2;
    demand(0, 1, true, 0);
    step((struct sched_event){.kind = SCHED_EV_READY, .model = 0}, 10); /* busy on GPU 1 */
    demand(1, 2, false, 20);
    assert_null(find(SCHED_ACT_START, 1)); /* GPU 1 is taken, and busy */
    demand(2, 3, false, 30);
    const struct sched_action *a = find(SCHED_ACT_START, 2);
    assert_non_null(a); /* GPU 2 was free: no claim holds a GPU nothing leaves */
    assert_int_equal(a->gpu, 2);
}

/* Fast swap moved a 2-GPU model out: it comes back on the same two, and
 * may come back while the one on them leaves (overlap, from each). */
static void multi_gpu_comes_back_where_it_left(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB};
    setup_models(2, need, NULL);
    S.ngpus = 4;
    S.overlap = true;
    for (int g = 0; g < 4; g++)
        S.gpus[g].capacity = 16 * GiB;
    models[0].width = 2;
    models[1].width = 2;
    models[0].allowed = 0x3;
    bring_up(0, 0);
    step((struct sched_event){.kind = SCHED_EV_SUSPEND, .model = 0}, 100);
    step((struct sched_event){.kind = SCHED_EV_SUSPENDED, .model = 0, .ok = true, .bound = true},
         200);
    assert_int_equal(models[0].bound, 0x3);
    models[0].allowed = 0; /* any now: the binding still holds */
    models[1].allowed = 0x3;
    bring_up(1, 300);
    demand(0, 9, false, 2000);
    const struct sched_action *r = find(SCHED_ACT_RESUME, 0);
    assert_non_null(find(SCHED_ACT_SUSPEND, 1));
    assert_non_null(r);
    assert_int_equal(models[0].gpus, 0x3);
    assert_true(r->overlap == 20 * GiB); /* 10 leaving each of the two */
}

/* A model that can never fit (its need over every budget it may use) is
 * refused at once, saying why, instead of at its deadline. */
static void too_big_refused_at_once(void **st)
{
    (void)st;
    const uint64_t need[] = {12 * GiB};
    setup_models(1, need, NULL);
    S.gpus[0].budget = 10 * GiB;
    demand(0, 1, false, 0);
    const struct sched_action *r = find(SCHED_ACT_REFUSE, 0);
    assert_non_null(r);
    assert_int_equal(r->refusal, SCHED_REFUSED_TOO_BIG);
    assert_non_null(strstr(r->why, "needs 12.0 GiB on each of 1 GPU, more than 10.0 GiB"));
    assert_int_equal(S.nqueue, 0);
}

/* A request whose client left while it waited: withdrawn, it evicts
 * nobody once the GPU frees up, and is never answered. */
static void withdrawn_demand(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB};
    setup_models(2, need, NULL);
    demand(0, 1, true, 0);
    step((struct sched_event){.kind = SCHED_EV_READY, .model = 0}, 10);
    assert_non_null(find(SCHED_ACT_GRANT, 0)); /* m0 busy, held */
    demand(1, 7, true, 20);
    assert_int_equal(S.nqueue, 1); /* m1 waits for room */
    step((struct sched_event){.kind = SCHED_EV_WITHDRAW, .model = 1, .id = 7}, 30);
    assert_int_equal(S.nqueue, 0);
    step((struct sched_event){.kind = SCHED_EV_RELEASE, .model = 0}, 40);
    assert_null(find(SCHED_ACT_SUSPEND, 0)); /* nobody to make room for */
    assert_null(find(SCHED_ACT_START, 1));
    step((struct sched_event){.kind = SCHED_EV_TICK}, 120000);
    assert_null(find(SCHED_ACT_REFUSE, 1));
    assert_int_equal(models[0].state, SCHED_READY);
}

/* max_loaded in all: with room for all three, a third model still makes
 * the least recently used one go, and starts once that one is on its way
 * out (its place given back); without a limit nobody would go. */
static void max_loaded_in_all(void **st)
{
    (void)st;
    const uint64_t need[] = {2 * GiB, 2 * GiB, 2 * GiB};
    setup_models(3, need, NULL);
    S.max_loaded = 2;
    bring_up(0, 1000);
    bring_up(1, 2000);
    demand(2, 7, true, 3000);
    assert_non_null(find(SCHED_ACT_SUSPEND, 0)); /* the least recently used */
    assert_null(find(SCHED_ACT_SUSPEND, 1));
    assert_null(find(SCHED_ACT_START, 2)); /* its place is promised, not taken twice */
    step((struct sched_event){.kind = SCHED_EV_TICK}, 3050);
    assert_non_null(find(SCHED_ACT_START, 2)); /* m0 leaving holds no place */
    assert_null(find(SCHED_ACT_SUSPEND, 1));
    step((struct sched_event){.kind = SCHED_EV_SUSPENDED, .model = 0, .ok = true}, 3100);
    step((struct sched_event){.kind = SCHED_EV_READY, .model = 2}, 3200);
    assert_non_null(find(SCHED_ACT_GRANT, 2));
    /* a resume needs a place too: m1 (least recently used now) goes for m0 */
    step((struct sched_event){.kind = SCHED_EV_RELEASE, .model = 2}, 3300);
    demand(0, 8, false, 3400);
    assert_non_null(find(SCHED_ACT_SUSPEND, 1));
    assert_null(find(SCHED_ACT_RESUME, 0));
    step((struct sched_event){.kind = SCHED_EV_TICK}, 3450);
    assert_non_null(find(SCHED_ACT_RESUME, 0));
    /* a place given back (unload) is taken without an eviction */
    step((struct sched_event){.kind = SCHED_EV_RESUMED, .model = 0, .ok = true}, 3500);
    step((struct sched_event){.kind = SCHED_EV_SUSPENDED, .model = 1, .ok = true}, 3550);
    step((struct sched_event){.kind = SCHED_EV_UNLOAD, .model = 2}, 3600);
    step((struct sched_event){.kind = SCHED_EV_EXITED, .model = 2}, 3650);
    demand(1, 9, false, 3700);
    assert_non_null(find(SCHED_ACT_RESUME, 1));
    assert_null(find(SCHED_ACT_SUSPEND, 0));
}

/* max_loaded per GPU: a second model goes to the other GPU (room on both),
 * a third evicts one; a pinned model holds its place, and with nothing
 * else to evict a demand waits and is told at its deadline. */
static void max_loaded_per_gpu(void **st)
{
    (void)st;
    const uint64_t need[] = {2 * GiB, 2 * GiB, 2 * GiB, 2 * GiB};
    setup_models(4, need, NULL);
    S.ngpus = 2;
    S.gpus[1].capacity = 16 * GiB;
    S.max_loaded_gpu = 1;
    bring_up(0, 1000);
    demand(1, 7, true, 2000);
    const struct sched_action *a = find(SCHED_ACT_START, 1);
    assert_non_null(a);
    assert_int_not_equal(a->gpu, models[0].gpu);
    assert_null(find(SCHED_ACT_SUSPEND, 0));
    step((struct sched_event){.kind = SCHED_EV_READY, .model = 1}, 2100);
    step((struct sched_event){.kind = SCHED_EV_RELEASE, .model = 1}, 2200);
    demand(2, 8, true, 3000);
    assert_non_null(find(SCHED_ACT_SUSPEND, 0)); /* least recently used, on its GPU */
    assert_null(find(SCHED_ACT_SUSPEND, 1));
    assert_null(find(SCHED_ACT_START, 2));
    step((struct sched_event){.kind = SCHED_EV_SUSPENDED, .model = 0, .ok = true}, 3100);
    assert_non_null(find(SCHED_ACT_START, 2));
    step((struct sched_event){.kind = SCHED_EV_READY, .model = 2}, 3200);
    /* pinned: m1 may not go, m2 is busy: m3 waits, and is told why at its deadline */
    models[1].pinned = true;
    demand(3, 9, false, 4000);
    assert_null(find(SCHED_ACT_START, 3));
    assert_null(find(SCHED_ACT_SUSPEND, 1));
    step((struct sched_event){.kind = SCHED_EV_TICK}, 4000 + 60000);
    a = find(SCHED_ACT_REFUSE, 3);
    assert_non_null(a);
    assert_int_equal(a->refusal, SCHED_REFUSED_TIMEOUT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(eviction_by_priority_then_lru),
        cmocka_unit_test(eviction_says_why),
        cmocka_unit_test(slow_start_is_no_memory_wait),
        cmocka_unit_test(lru_and_pinned),
        cmocka_unit_test(one_start_for_many_demands),
        cmocka_unit_test(foreign_memory_and_timeouts),
        cmocka_unit_test(host_budget_stops_instead),
        cmocka_unit_test(host_budget_stop_says_why),
        cmocka_unit_test(spill_budget_suspends_past_host),
        cmocka_unit_test(failing_model_is_not_retried_forever),
        cmocka_unit_test(crash_restart_and_resume_elsewhere),
        cmocka_unit_test(fast_swapped_comes_back_where_it_left),
        cmocka_unit_test(pressure_evicts_at_once),
        cmocka_unit_test(min_residency_against_thrash),
        cmocka_unit_test(min_residency_auto_is_the_switch),
        cmocka_unit_test(keep_alive_without_pressure),
        cmocka_unit_test(request_keep_alive),
        cmocka_unit_test(budget_is_for_models),
        cmocka_unit_test(overlapped_switch),
        cmocka_unit_test(unloaded_while_out_holds_no_room),
        cmocka_unit_test(spans_all_or_none),
        cmocka_unit_test(listed_gpus_and_claims),
        cmocka_unit_test(multi_gpu_comes_back_where_it_left),
        cmocka_unit_test(too_big_refused_at_once),
        cmocka_unit_test(next_wake),
        cmocka_unit_test(withdrawn_demand),
        cmocka_unit_test(max_loaded_in_all),
        cmocka_unit_test(max_loaded_per_gpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
