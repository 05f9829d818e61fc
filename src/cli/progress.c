/* progress: a thread that draws the elapsed time of a blocking call.
 *
 * The calls it measures (an HTTP request to the daemon that waits for a
 * model, a checkpoint through the driver) block in one system call, so the
 * line is drawn from a thread of its own rather than between steps. */
#include "cli/progress.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROGRESS_AFTER_MS 1000
#define PROGRESS_EVERY_MS 200

static struct timespec deadline(const struct timespec *from, long ms)
{
    struct timespec t = *from;
    t.tv_sec += ms / 1000;
    t.tv_nsec += (ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

static void *draw(void *arg)
{
    struct progress *p = arg;
    struct timespec t0;
    clock_gettime(CLOCK_REALTIME, &t0);
    long at = PROGRESS_AFTER_MS;
    pthread_mutex_lock(&p->lock);
    while (!p->done) {
        struct timespec until = deadline(&t0, at);
        if (pthread_cond_timedwait(&p->cond, &p->lock, &until) != ETIMEDOUT)
            continue;
        /* stderr is unbuffered: one write per frame */
        fprintf(stderr, "\r%s ... %.1f s ", p->what, (double)at / 1000);
        p->shown = true;
        at += PROGRESS_EVERY_MS;
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

void progress_start(struct progress *p, const char *what)
{
    memset(p, 0, sizeof *p);
    snprintf(p->what, sizeof p->what, "%s", what);
    if (!isatty(STDERR_FILENO))
        return;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);
    p->running = pthread_create(&p->thread, NULL, draw, p) == 0;
}

void progress_stop(struct progress *p)
{
    if (!p->running)
        return;
    pthread_mutex_lock(&p->lock);
    p->done = true;
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    if (p->shown)
        fprintf(stderr, "\r%*s\r", (int)strlen(p->what) + 16, "");
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->cond);
    p->running = false;
}
