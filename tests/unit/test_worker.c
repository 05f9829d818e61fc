/* Suspends and resumes off the loop: each job runs on a thread of its own
 * while the loop goes on, and its report comes back on the loop's thread,
 * whole, with its model, its direction and its error. */
#include <event2/event.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "move/worker.h"

struct seen {
    struct event_base *base;
    pthread_t loop_thread;
    unsigned n;
    struct worker_report r[8];
    bool on_loop[8];
};

/* Posted by done() once the two quick jobs have reported back. */
static sem_t quick_reported;

/* A stand-in for move.c: slow for model 0 (a checkpoint), quick for the
 * others (fast swap); model 2 fails. The slow one lasts until the quick
 * ones have reported back (10 s at most): only jobs that do not wait for
 * one another get there, however slowly a loaded machine runs threads (a
 * fixed 200 ms could pass before they ran). */
static void fake_move(void *arg, const struct worker_job *j, struct worker_report *r)
{
    (void)arg;
    if (j->model == 0) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 10;
        while (sem_timedwait(&quick_reported, &until) < 0 && errno == EINTR)
            ;
    }
    r->ok = j->model != 2;
    r->fast = j->model != 0;
    if (!r->ok)
        snprintf(r->error, sizeof r->error, "pid %d: no room on GPU %s", (int)j->pids[0], j->to);
}

static void done(void *arg, const struct worker_report *r)
{
    struct seen *s = arg;
    s->on_loop[s->n] = pthread_equal(pthread_self(), s->loop_thread);
    s->r[s->n++] = *r;
    unsigned quick = 0;
    for (unsigned k = 0; k < s->n; k++)
        quick += s->r[k].model != 0;
    if (r->model != 0 && quick == 2)
        sem_post(&quick_reported);
    if (s->n == 3)
        event_base_loopbreak(s->base);
}

static void jobs_report_back_on_the_loop(void **st)
{
    (void)st;
    struct seen s = {.base = event_base_new(), .loop_thread = pthread_self()};
    assert_int_equal(sem_init(&quick_reported, 0, 0), 0);
    struct worker *w = worker_new(s.base, fake_move, NULL, done, &s);
    assert_non_null(w);
    char err[100];
    struct worker_job slow = {.model = 0, .pids = {100}, .npids = 1};
    struct worker_job quick = {.model = 1, .resume = true, .pids = {101}, .npids = 1};
    struct worker_job bad = {.model = 2, .resume = true, .pids = {102}, .npids = 1};
    snprintf(bad.to, sizeof bad.to, "GPU-1234");
    assert_int_equal(worker_start(w, &slow, err, sizeof err), 0);
    assert_int_equal(worker_start(w, &quick, err, sizeof err), 0);
    assert_int_equal(worker_start(w, &bad, err, sizeof err), 0);
    struct timeval limit = {10, 0};
    event_base_loopexit(s.base, &limit);
    event_base_dispatch(s.base);
    assert_int_equal(s.n, 3);
    /* the slow one did not hold the others back */
    assert_int_equal(s.r[2].model, 0);
    assert_false(s.r[2].resume);
    assert_true(s.r[2].ok && !s.r[2].fast);
    for (unsigned k = 0; k < 3; k++) {
        assert_true(s.on_loop[k]);
        if (s.r[k].model == 2) {
            assert_false(s.r[k].ok);
            assert_true(s.r[k].resume);
            assert_string_equal(s.r[k].error, "pid 102: no room on GPU GPU-1234");
        }
    }
    worker_free(w);
    event_base_free(s.base);
    sem_destroy(&quick_reported);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(jobs_report_back_on_the_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
