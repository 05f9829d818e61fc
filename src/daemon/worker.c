/* worker: a suspend or resume takes from a tenth of a second (fast swap)
 * to seconds (the driver's checkpoint moved 16 GiB out in 8.6 s on an
 * H200), so each runs on a thread of its own, by the path park.c picks,
 * and reports through a pipe; the loop turns the report into a scheduler
 * event. Threads share nothing with the loop but their job and the pipe. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "park/ckpt.h"
#include "park/park.h"

struct job {
    struct ckpt *ckpt;
    const char *ckpt_why;
    bool driver_only;
    int fd;
    unsigned model;
    bool resume;
    pid_t pid;
    char from[96], to[96];
};

struct report {
    unsigned model;
    bool resume, ok;
    bool fast; /* by fast swap: it comes back only on the GPU it left */
    char error[232];
};

static void *run(void *arg)
{
    struct job *j = arg;
    struct report r = {j->model, j->resume, false, false, ""};
    struct park_result pr = {0}; /* park.c asks the process which path */
    int rc = j->resume ? park_resume(j->ckpt, j->ckpt_why, j->pid, j->from[0] ? j->from : NULL,
                                     j->to[0] ? j->to : NULL, &pr, r.error, sizeof r.error)
                       : park_suspend(j->ckpt, j->ckpt_why, j->pid, 30000, j->driver_only, &pr,
                                      r.error, sizeof r.error);
    r.ok = rc == 0;
    r.fast = pr.path == PARK_FAST;
    /* one write of less than PIPE_BUF: atomic, never interleaved */
    while (write(j->fd, &r, sizeof r) < 0 && errno == EINTR)
        ;
    free(j);
    return NULL;
}

static void on_report(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    struct daemon *d = arg;
    struct report r;
    while (read(fd, &r, sizeof r) == (ssize_t)sizeof r) {
        struct sched_event e = {.kind = r.resume ? SCHED_EV_RESUMED : SCHED_EV_SUSPENDED,
                                .model = r.model,
                                .ok = r.ok,
                                .bound = !r.resume && r.fast,
                                .error = r.error};
        if (!r.resume && r.ok)
            snprintf(d->dm[r.model].how, sizeof d->dm[r.model].how, "%s",
                     r.fast ? "fast" : "checkpoint");
        if (!r.resume && r.ok)
            e.bytes = d->dm[r.model].host_bytes;
        daemon_step(d, &e);
    }
}

int worker_init(struct daemon *d)
{
    if (pipe(d->worker_fd) < 0)
        return -1;
    evutil_make_socket_nonblocking(d->worker_fd[0]);
    evutil_make_socket_closeonexec(d->worker_fd[0]);
    evutil_make_socket_closeonexec(d->worker_fd[1]);
    d->worker_ev = event_new(d->base, d->worker_fd[0], EV_READ | EV_PERSIST, on_report, d);
    return d->worker_ev ? event_add(d->worker_ev, NULL) : -1;
}

static void launch(struct daemon *d, struct job *j)
{
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &a, run, j) != 0) {
        struct sched_event e = {.kind = j->resume ? SCHED_EV_RESUMED : SCHED_EV_SUSPENDED,
                                .model = j->model,
                                .error = "cannot start a thread"};
        free(j);
        daemon_step(d, &e);
    }
    pthread_attr_destroy(&a);
}

static struct job *job(struct daemon *d, unsigned model, bool resume)
{
    struct job *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->ckpt = d->ckpt;
    j->ckpt_why = d->ckpt_why;
    j->driver_only = !d->dm[model].cfg.fast;
    j->fd = d->worker_fd[1];
    j->model = model;
    j->resume = resume;
    j->pid = d->dm[model].pid;
    return j;
}

void worker_suspend(struct daemon *d, unsigned model)
{
    /* without the driver's checkpoints, fast swap may still serve */
    struct job *j = d->ckpt || d->dm[model].cfg.fast ? job(d, model, false) : NULL;
    if (!j) {
        struct sched_event e = {.kind = SCHED_EV_SUSPENDED,
                                .model = model,
                                .error = d->ckpt ? "out of memory" : d->ckpt_why};
        daemon_step(d, &e);
        return;
    }
    launch(d, j);
}

void worker_resume(struct daemon *d, unsigned model, int gpu)
{
    struct job *j = d->ckpt || d->dm[model].cfg.fast ? job(d, model, true) : NULL;
    if (!j) {
        struct sched_event e = {.kind = SCHED_EV_RESUMED, .model = model, .error = d->ckpt_why};
        daemon_step(d, &e);
        return;
    }
    int left = d->dm[model].left_gpu;
    if (left >= 0 && gpu >= 0 && left != gpu) { /* the driver remaps by UUID */
        snprintf(j->from, sizeof j->from, "%s", d->gpu_uuid[left]);
        snprintf(j->to, sizeof j->to, "%s", d->gpu_uuid[gpu]);
    }
    launch(d, j);
}
