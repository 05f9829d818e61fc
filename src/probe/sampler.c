/* sampler: a thread, a mutex over the latest snapshot and its generation,
 * and a pipe that wakes the loop. */
#include "probe/sampler.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host/clock.h"
#include "probe/probe.h"

struct sampler {
    struct probe *probe;
    unsigned period_ms;
    void (*fresh)(void *arg);
    void *arg;
    int fd[2];
    struct event *ev;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool quit;
    uint64_t asked, taken; /* generations: the last asked for, the last published */
    struct snap work, latest;
};

static void *run(void *arg)
{
    struct sampler *s = arg;
    pthread_mutex_lock(&s->mu);
    while (!s->quit) {
        uint64_t gen = s->asked + 1; /* whoever asks from now on is after this one */
        s->asked = gen;
        pthread_mutex_unlock(&s->mu);
        probe_sample(s->probe, &s->work, PROBE_PROCS, clock_wall_ms());
        pthread_mutex_lock(&s->mu);
        if (snap_copy(&s->latest, &s->work) == 0)
            s->taken = gen;
        char one = 1;
        while (write(s->fd[1], &one, 1) < 0 && errno == EINTR)
            ;
        if (s->asked != gen) /* asked meanwhile: again at once */
            continue;
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += (long)(s->period_ms % 1000) * 1000000;
        t.tv_sec += s->period_ms / 1000 + t.tv_nsec / 1000000000;
        t.tv_nsec %= 1000000000;
        while (!s->quit && s->asked == gen && pthread_cond_timedwait(&s->cv, &s->mu, &t) == 0)
            ;
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void on_ready(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    struct sampler *s = arg;
    char buf[64];
    while (read(fd, buf, sizeof buf) > 0) /* several at once: one look will do */
        ;
    s->fresh(s->arg);
}

struct sampler *sampler_start(struct event_base *base, struct probe *p, unsigned period_ms,
                              void (*fresh)(void *arg), void *arg)
{
    struct sampler *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->probe = p;
    s->period_ms = period_ms;
    s->fresh = fresh;
    s->arg = arg;
    if (pipe2(s->fd, O_CLOEXEC | O_NONBLOCK) < 0) {
        free(s);
        return NULL;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->ev = event_new(base, s->fd[0], EV_READ | EV_PERSIST, on_ready, s);
    if (!s->ev || event_add(s->ev, NULL) < 0 || pthread_create(&s->th, NULL, run, s) != 0) {
        if (s->ev)
            event_free(s->ev);
        close(s->fd[0]);
        close(s->fd[1]);
        free(s);
        return NULL;
    }
    return s;
}

uint64_t sampler_ask(struct sampler *s)
{
    pthread_mutex_lock(&s->mu);
    uint64_t gen = ++s->asked;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return gen;
}

uint64_t sampler_take(struct sampler *s, struct snap *dst)
{
    pthread_mutex_lock(&s->mu);
    uint64_t gen = snap_copy(dst, &s->latest) == 0 ? s->taken : 0;
    pthread_mutex_unlock(&s->mu);
    return gen;
}

void sampler_stop(struct sampler *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->quit = true;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->th, NULL);
    event_free(s->ev);
    close(s->fd[0]);
    close(s->fd[1]);
    snap_free(&s->work);
    snap_free(&s->latest);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}
