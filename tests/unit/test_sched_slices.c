/* The scheduler's time slices on scripted sequences: models that answer
 * long requests take the GPU in turn, a slice is taken only when it pays
 * (a saturated model is not sliced back and forth), by priority, never
 * starving anyone, and a model that cannot be moved or dies while out. */
#include "core/schedwhen.h"
#include "sched_fixture.h"

/* Models answering long requests: on for the test, slice 5 s. */
static void setup_busy(size_t n, const uint64_t *need, const int *prio)
{
    setup_models(n, need, prio);
    S.overlap = true;
    S.preempt_gap_ms = 1000;
    for (size_t i = 0; i < n; i++) {
        models[i].preempt = true;
        models[i].slice_ms = 5000;
    }
}

/* A model holding one request (start, ready, granted held). */
static void busy_from(unsigned m, uint64_t id, uint64_t now)
{
    demand(m, id, true, now);
    if (find(SCHED_ACT_START, m))
        step((struct sched_event){.kind = SCHED_EV_READY, .model = m}, now + 10);
}

/* Two models answering at once on a GPU that holds one: each gets the GPU
 * for its slice in turn; its requests wait while it is out, held. */
static void time_slices_round_robin(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB};
    setup_busy(2, need, NULL);
    busy_from(0, 1, 0);
    assert_int_equal(models[0].state, SCHED_BUSY);
    demand(1, 2, true, 100);
    assert_null(find(SCHED_ACT_SUSPEND, 0)); /* its slice is not over */
    step((struct sched_event){.kind = SCHED_EV_TICK}, 4900);
    assert_null(find(SCHED_ACT_SUSPEND, 0));
    step((struct sched_event){.kind = SCHED_EV_TICK}, 5010);
    const struct sched_action *a = find(SCHED_ACT_SUSPEND, 0);
    assert_non_null(a);
    assert_true(a->preempt);
    step((struct sched_event){.kind = SCHED_EV_SUSPENDED, .model = 0, .ok = true, .bound = true},
         5200);
    assert_non_null(find(SCHED_ACT_START, 1));
    assert_int_equal(models[0].holds, 1); /* its request is held, not failed */
    step((struct sched_event){.kind = SCHED_EV_READY, .model = 1}, 5300);
    assert_non_null(find(SCHED_ACT_GRANT, 1));
    uint64_t t = 5300;
    for (int round = 0; round < 4; round++) {
        unsigned on = round % 2 ? 0 : 1, off = 1 - on;
        step((struct sched_event){.kind = SCHED_EV_TICK}, t + 4000);
        assert_null(find(SCHED_ACT_SUSPEND, on));
        step((struct sched_event){.kind = SCHED_EV_TICK}, t + 5100);
        assert_non_null(find(SCHED_ACT_SUSPEND, on));
        /* the one coming back overlaps the one going out */
        assert_non_null(find(SCHED_ACT_RESUME, off));
        step((struct sched_event){.kind = SCHED_EV_SUSPENDED, .model = on, .ok = true,
                                  .bound = true},
             t + 5300);
        step((struct sched_event){.kind = SCHED_EV_RESUMED, .model = off, .ok = true}, t + 5400);
        assert_int_equal(models[off].state, SCHED_BUSY);
        t += 5400;
    }
    assert_true(models[0].preemptions >= 2 && models[1].preemptions >= 2);
}

/* A saturated model (requests queued behind those it answers) is not
 * sliced for every arrival: the waiting request must first have waited
 * what the switch costs that queue (backlog x its last switch), a slice at
 * most; a model with nothing queued is preempted once its slice is over. */
static void slices_spare_a_saturated_model(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB};
    setup_busy(2, need, NULL);
    busy_from(0, 1, 0);
    models[0].backlog = 3;
    models[0].switch_ms = 1000; /* bar: 3 s */
    demand(1, 2, true, 6000);   /* model 0's slice is over already */
    assert_null(find(SCHED_ACT_SUSPEND, 0));
    step((struct sched_event){.kind = SCHED_EV_TICK}, 8900);
    assert_null(find(SCHED_ACT_SUSPEND, 0));
    assert_true(schedwhen_next_ms(&S, 8900) <= 9000); /* the daemon wakes when it is due */
    step((struct sched_event){.kind = SCHED_EV_TICK}, 9000);
    assert_non_null(find(SCHED_ACT_SUSPEND, 0));
    /* a deep queue: a slice at most, however deep */
    setup_busy(2, need, NULL);
    busy_from(0, 1, 0);
    models[0].backlog = 40;
    models[0].switch_ms = 1000;
    demand(1, 2, true, 6000);
    step((struct sched_event){.kind = SCHED_EV_TICK}, 10900);
    assert_null(find(SCHED_ACT_SUSPEND, 0));
    step((struct sched_event){.kind = SCHED_EV_TICK}, 11000);
    assert_non_null(find(SCHED_ACT_SUSPEND, 0));
    /* nothing queued: at once */
    setup_busy(2, need, NULL);
    busy_from(0, 1, 0);
    models[0].switch_ms = 1000;
    demand(1, 2, true, 6000);
    assert_non_null(find(SCHED_ACT_SUSPEND, 0));
}

/* A model done within its slice is not preempted: it is simply evicted,
 * and nothing waits longer than it must. */
static void finishes_within_its_slice(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB};
    setup_busy(2, need, NULL);
    busy_from(0, 1, 0);
    demand(1, 2, true, 100);
    step((struct sched_event){.kind = SCHED_EV_RELEASE, .model = 0}, 2000);
    const struct sched_action *a = find(SCHED_ACT_SUSPEND, 0);
    assert_non_null(a);
    assert_false(a->preempt);
}

/* pinned models and preempt = no are never preempted: the demand waits
 * (today's behaviour), and times out if the answer takes longer. */
static void pinned_and_preempt_no(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB, 10 * GiB};
    setup_busy(3, need, NULL);
    models[0].pinned = true;
    busy_from(0, 1, 0);
    demand(1, 2, true, 100);
    step((struct sched_event){.kind = SCHED_EV_TICK}, 30000);
    assert_null(find(SCHED_ACT_SUSPEND, 0));
    step((struct sched_event){.kind = SCHED_EV_RELEASE, .model = 0}, 30100);
    step((struct sched_event){.kind = SCHED_EV_UNLOAD, .model = 0}, 30200);
    step((struct sched_event){.kind = SCHED_EV_EXITED, .model = 0}, 30300);
    models[1].preempt = false;
    step((struct sched_event){.kind = SCHED_EV_READY, .model = 1}, 30400);
    assert_int_equal(models[1].state, SCHED_BUSY);
    demand(2, 3, true, 30500);
    step((struct sched_event){.kind = SCHED_EV_TICK}, 60000);
    assert_null(find(SCHED_ACT_SUSPEND, 1));
}

/* Carries out what the last step decided, as the daemon would, the
 * moves done 100 ms later, until nothing more is decided; returns the time. */
static uint64_t carry_out(uint64_t t)
{
    for (int guard = 0; guard < 20; guard++) {
        struct sched_action todo[16];
        size_t n = 0;
        for (size_t i = 0; i < NA && n < 16; i++)
            if (A[i].kind == SCHED_ACT_SUSPEND || A[i].kind == SCHED_ACT_START ||
                A[i].kind == SCHED_ACT_RESUME)
                todo[n++] = A[i];
        if (!n)
            return t;
        for (size_t i = 0; i < n; i++) {
            struct sched_event e = {.model = todo[i].model, .ok = true, .bound = true};
            e.kind = todo[i].kind == SCHED_ACT_SUSPEND  ? SCHED_EV_SUSPENDED
                     : todo[i].kind == SCHED_ACT_START ? SCHED_EV_READY
                                                       : SCHED_EV_RESUMED;
            step(e, t += 100);
        }
    }
    return t;
}

/* The lowest priority goes first; among equals, the one that has had the
 * GPU longest. */
static void priority_first(void **st)
{
    (void)st;
    const uint64_t need[] = {6 * GiB, 6 * GiB, 6 * GiB};
    const int prio[] = {7, 3, 5};
    setup_busy(3, need, prio);
    busy_from(0, 1, 0);
    busy_from(1, 2, 100);
    demand(2, 3, true, 200);
    step((struct sched_event){.kind = SCHED_EV_TICK}, 5200);
    assert_non_null(find(SCHED_ACT_SUSPEND, 1)); /* priority 3 before 7 */
    assert_null(find(SCHED_ACT_SUSPEND, 0));
}

/* Never more than one preemption per preempt_gap on a GPU, however short
 * the slices: the link is not spent on thrash. */
static void preempt_gap(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB};
    setup_busy(2, need, NULL);
    S.preempt_gap_ms = 10000;
    models[0].slice_ms = models[1].slice_ms = 100;
    busy_from(0, 1, 0);
    demand(1, 2, true, 10);
    uint64_t t = 10, last = 0;
    unsigned seen = 0;
    while (t < 60000) {
        step((struct sched_event){.kind = SCHED_EV_TICK}, t += 200);
        for (size_t i = 0; i < NA; i++)
            if (A[i].kind == SCHED_ACT_SUSPEND && A[i].preempt) {
                assert_true(!seen || t - last >= 10000);
                last = t;
                seen++;
            }
        t = carry_out(t);
    }
    assert_true(seen >= 4 && seen <= 6);
}

/* Three models answering, room for one: each waits at most two slices (and
 * the swaps) for its next turn. */
static void no_starvation(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB, 10 * GiB};
    setup_busy(3, need, NULL);
    busy_from(0, 1, 0);
    demand(1, 2, true, 10);
    demand(2, 3, true, 20);
    uint64_t last_on[3] = {0, 0, 0}, worst = 0, t = 20;
    while (t < 60000) {
        step((struct sched_event){.kind = SCHED_EV_TICK}, t += 200);
        t = carry_out(t);
        for (unsigned m = 0; m < 3; m++)
            if (models[m].state == SCHED_BUSY) {
                if (t - last_on[m] > worst)
                    worst = t - last_on[m];
                last_on[m] = t;
            }
    }
    for (unsigned m = 0; m < 3; m++)
        assert_true(models[m].preemptions >= 2);
    assert_true(worst <= 2 * 5000 + 3 * 1000);
}

/* Fast swap may refuse to move a model mid-request (memory it cannot
 * move): it runs on, busy, and is not asked again; a preempted model whose
 * process dies is restarted like any other. */
static void refused_and_died(void **st)
{
    (void)st;
    const uint64_t need[] = {10 * GiB, 10 * GiB};
    setup_busy(2, need, NULL);
    busy_from(0, 1, 0);
    demand(1, 2, true, 100);
    step((struct sched_event){.kind = SCHED_EV_TICK}, 5100);
    assert_non_null(find(SCHED_ACT_SUSPEND, 0));
    step((struct sched_event){.kind = SCHED_EV_SUSPENDED, .model = 0, .error = "managed memory"},
         5200);
    assert_int_equal(models[0].state, SCHED_BUSY);
    assert_null(find(SCHED_ACT_STOP, 0)); /* its request goes on */
    step((struct sched_event){.kind = SCHED_EV_TICK}, 20000);
    assert_null(find(SCHED_ACT_SUSPEND, 0));
    /* another pair: the preempted one dies while out */
    setup_busy(2, need, NULL);
    busy_from(0, 1, 0);
    demand(1, 2, true, 100);
    step((struct sched_event){.kind = SCHED_EV_TICK}, 5100);
    step((struct sched_event){.kind = SCHED_EV_SUSPENDED, .model = 0, .ok = true, .bound = true},
         5200);
    step((struct sched_event){.kind = SCHED_EV_EXITED, .model = 0, .error = "killed"}, 5300);
    assert_int_equal(models[0].holds, 0);
    assert_int_equal(models[0].state, SCHED_STOPPED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(time_slices_round_robin),
        cmocka_unit_test(slices_spare_a_saturated_model),
        cmocka_unit_test(finishes_within_its_slice),
        cmocka_unit_test(pinned_and_preempt_no),
        cmocka_unit_test(priority_first),
        cmocka_unit_test(preempt_gap),
        cmocka_unit_test(no_starvation),
        cmocka_unit_test(refused_and_died),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
