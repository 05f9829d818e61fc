/* freeevent: events recorded at frees, cached per context (see freeevent.h). */
#include "shim/freeevent.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "shim/driver.h"

#define KEEP 256 /* unused events kept for the next frees */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct freeevent *cache;
static unsigned cached;

struct freeevent *freeevent_get(void)
{
    CUcontext ctx = NULL;
    if (!real_cuCtxGetCurrent || real_cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)
        return NULL;
    pthread_mutex_lock(&mu);
    struct freeevent *s = NULL;
    for (struct freeevent **p = &cache; *p; p = &(*p)->next)
        if ((*p)->ctx == ctx) {
            s = *p;
            *p = s->next;
            cached--;
            break;
        }
    pthread_mutex_unlock(&mu);
    if (!s && (s = calloc(1, sizeof *s)) &&
        real_cuEventCreate(&s->ev, 2 /* no timing */) != CUDA_SUCCESS) {
        free(s);
        return NULL;
    }
    if (s) {
        s->ctx = ctx;
        s->refs = 1;
    }
    return s;
}

void freeevent_put(struct freeevent *s)
{
    if (!s || --s->refs > 0)
        return;
    pthread_mutex_lock(&mu);
    bool keep = cached < KEEP;
    if (keep) {
        s->next = cache;
        cache = s;
        cached++;
    }
    pthread_mutex_unlock(&mu);
    if (!keep) {
        if (real_cuEventDestroy_v2)
            real_cuEventDestroy_v2(s->ev);
        free(s);
    }
}

void freeevent_after_fork(void)
{
    pthread_mutex_init(&mu, NULL);
    cache = NULL;
    cached = 0;
}
