/* worker: a thread per job, a pipe back. Threads share nothing with the
 * loop but their copy of the job and the pipe's write end: one write of a
 * report shorter than PIPE_BUF is atomic, never interleaved. */
#include "move/worker.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct worker {
    int fd[2];
    struct event *ev;
    worker_run_fn run;
    void *run_arg;
    void (*done)(void *arg, const struct worker_report *r);
    void *arg;
};

struct thread_job {
    struct worker *w;
    struct worker_job job;
};

_Static_assert(sizeof(struct worker_report) < PIPE_BUF, "a report is written in one piece");

static void *thread_main(void *arg)
{
    struct thread_job *t = arg;
    struct worker_report r = {
        .model = t->job.model, .chore = t->job.chore, .resume = t->job.resume, .keep = t->job.keep};
    t->w->run(t->w->run_arg, &t->job, &r);
    while (write(t->w->fd[1], &r, sizeof r) < 0 && errno == EINTR)
        ;
    free(t);
    return NULL;
}

static void on_report(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    struct worker *w = arg;
    struct worker_report r;
    while (read(fd, &r, sizeof r) == (ssize_t)sizeof r) {
        r.error[sizeof r.error - 1] = '\0';
        w->done(w->arg, &r);
    }
}

struct worker *worker_new(struct event_base *base, worker_run_fn run, void *run_arg,
                          void (*done)(void *arg, const struct worker_report *r), void *arg)
{
    struct worker *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    if (pipe2(w->fd, O_CLOEXEC | O_NONBLOCK) < 0) {
        free(w);
        return NULL;
    }
    /* the write end blocks: a report is never dropped */
    fcntl(w->fd[1], F_SETFL, 0);
    w->run = run;
    w->run_arg = run_arg;
    w->done = done;
    w->arg = arg;
    w->ev = event_new(base, w->fd[0], EV_READ | EV_PERSIST, on_report, w);
    if (!w->ev || event_add(w->ev, NULL) < 0) {
        close(w->fd[0]);
        close(w->fd[1]);
        if (w->ev)
            event_free(w->ev);
        free(w);
        return NULL;
    }
    return w;
}

void worker_free(struct worker *w)
{
    if (!w)
        return;
    event_free(w->ev);
    close(w->fd[0]);
    close(w->fd[1]);
    free(w);
}

int worker_start(struct worker *w, const struct worker_job *j, char *err, size_t len)
{
    struct thread_job *t = malloc(sizeof *t);
    if (!t) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    t->w = w;
    t->job = *j;
    pthread_t th;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &a, thread_main, t);
    pthread_attr_destroy(&a);
    if (rc != 0) {
        free(t);
        snprintf(err, len, "cannot start a thread: %s", strerror(rc));
        return -1;
    }
    return 0;
}
