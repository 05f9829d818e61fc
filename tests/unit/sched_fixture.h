/* sched_fixture.h: the scheduler under test, for the unit tests that
 * script it (test_sched.c, test_sched_slices.c): one scheduler, its
 * models, the actions of the last step, and the steps they all take.
 * Every step checks that no GPU is committed past what it holds. */
#ifndef VRAM_TESTS_SCHED_FIXTURE_H
#define VRAM_TESTS_SCHED_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "core/sched.h"

#define GiB (1ULL << 30)

static struct sched_model models[8];
static struct sched S;
static struct sched_action A[512];
static size_t NA;

static inline void setup_models(size_t n, const uint64_t *need, const int *prio)
{
    memset(&S, 0, sizeof S);
    memset(models, 0, sizeof models);
    for (size_t i = 0; i < n; i++) {
        snprintf(models[i].name, sizeof models[i].name, "m%zu", i);
        models[i].need = need[i];
        models[i].priority = prio ? prio[i] : 5;
        models[i].gpu = -1;
        models[i].resume_gpu = -1;
    }
    S.models = models;
    S.nmodels = n;
    S.ngpus = 1;
    S.gpus[0].capacity = 16 * GiB;
    S.host_budget = 64 * GiB;
    S.min_resident_ms = 0; /* the tests below that are about it set it */
    for (size_t i = 0; i < n; i++)
        models[i].keep_alive_ms = SCHED_FOREVER;
    S.max_failures = 3;
    S.backoff_ms = 1000;
}

static inline size_t step(struct sched_event e, uint64_t now)
{
    NA = sched_step(&S, &e, now, A, 512);
    for (size_t g = 0; g < S.ngpus; g++) { /* never overcommitted, once the leaving have left */
        uint64_t leaving = 0;
        for (size_t i = 0; i < S.nmodels; i++)
            if ((models[i].gpus >> g & 1) &&
                (models[i].state == SCHED_SUSPENDING || models[i].state == SCHED_STOPPING))
                leaving += models[i].need;
        assert_true(sched_committed(&S, (int)g) + S.gpus[g].foreign <=
                    S.gpus[g].capacity + leaving);
    }
    return NA;
}

static inline const struct sched_action *find(enum sched_act k, unsigned model)
{
    for (size_t i = 0; i < NA; i++)
        if (A[i].kind == k && A[i].model == model)
            return &A[i];
    return NULL;
}

static inline void demand(unsigned m, uint64_t id, bool hold, uint64_t now)
{
    step((struct sched_event){.kind = SCHED_EV_DEMAND,
                              .model = m,
                              .id = id,
                              .hold = hold,
                              .deadline_ms = now + 60000},
         now);
}

/* Brings model m up: demand, start, ready; then releases it. */
static inline void bring_up(unsigned m, uint64_t now)
{
    demand(m, 100 + m, true, now);
    assert_non_null(find(SCHED_ACT_START, m));
    step((struct sched_event){.kind = SCHED_EV_READY, .model = m}, now + 10);
    assert_non_null(find(SCHED_ACT_GRANT, m));
    step((struct sched_event){.kind = SCHED_EV_RELEASE, .model = m}, now + 20);
}

#endif
