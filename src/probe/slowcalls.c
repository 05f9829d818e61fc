/* slowcalls: a sample's slow tier of NVML calls on threads of its own.
 *
 * On a first sample these calls cost milliseconds (11 ms for the tier on
 * an H100, more than the process lists and the /proc join together), in
 * the driver, not in vram: nvidia-smi asked for the same fields pays the
 * same. They need nothing of each other, so each (GPU, part) pair is an
 * item taken from a shared counter, GPUs first (the driver may serialise
 * the calls of one GPU and still answer two GPUs at once), while the
 * sample's thread reads memory, the process lists and /proc; at the end it
 * takes what is left itself.
 *
 * One thread starts; only when an item turns out slow does it start the
 * others: threads cost more than calls that answer in microseconds (a
 * later sample's, or a driver that has them at hand), and on a virtual machine
 * every later change of the process's mappings then interrupts each CPU
 * they ran on. The sample waits for the items under way, not for the
 * threads: one the scheduler has not run yet (a busy machine) finds
 * nothing left, and the last holder of the items frees them. If the driver
 * answers one call at a time, the tier costs what it did, and a thread or
 * a few; if it does not, little more than its slowest part. On a single
 * CPU, the items in turn. */
#include "probe/slowcalls.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* enough for every part of one GPU, or one part of eight GPUs, at once */
#define SLOWCALLS_THREADS 8
/* an item this long is worth the other threads' start (tens of us each) */
#define SLOWCALLS_SLOW_NS 100000

struct slowcalls {
    struct nvml *nvml;
    struct snap *s;
    unsigned part[NVML_PARTS]; /* the enum nvml_part values asked */
    unsigned ngpus, items;
    unsigned next, refs; /* the next item to take; the struct's holders (atomics) */
    unsigned *got;       /* per item: the have bits it got */
    pthread_mutex_t mu;
    pthread_cond_t cv; /* signalled when the last item is answered */
    unsigned done;     /* items answered, under mu */
};

static void release(struct slowcalls *c)
{
    if (__atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL))
        return;
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c->got);
    free(c);
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Starts up to n threads running fn, each holding c. */
static void start_threads(struct slowcalls *c, unsigned n, void *(*fn)(void *))
{
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (; n > 0; n--) {
        pthread_t th;
        __atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
        if (pthread_create(&th, &attr, fn, c) != 0) {
            __atomic_sub_fetch(&c->refs, 1, __ATOMIC_RELAXED);
            break;
        }
    }
    pthread_attr_destroy(&attr);
}

static void *run(void *arg);

/* Item k: part k / ngpus of GPU k % ngpus. The first thread (first)
 * starts the others after an item that took long, for what is left. */
static void take_all(struct slowcalls *c, bool first)
{
    for (;;) {
        unsigned k = __atomic_fetch_add(&c->next, 1, __ATOMIC_RELAXED);
        if (k >= c->items)
            return;
        unsigned gpu = k % c->ngpus;
        int64_t t0 = first ? now_ns() : 0;
        c->got[k] =
            nvml_slow_part(c->nvml, gpu, (enum nvml_part)c->part[k / c->ngpus], &c->s->gpus[gpu]);
        if (first && now_ns() - t0 >= SLOWCALLS_SLOW_NS) {
            unsigned left = c->items - 1 - k;
            start_threads(c, left < SLOWCALLS_THREADS - 1 ? left : SLOWCALLS_THREADS - 1, run);
            first = false;
        }
        pthread_mutex_lock(&c->mu);
        if (++c->done == c->items)
            pthread_cond_signal(&c->cv);
        pthread_mutex_unlock(&c->mu);
    }
}

static void *run_first(void *arg)
{
    take_all(arg, true);
    release(arg);
    return NULL;
}

static void *run(void *arg)
{
    take_all(arg, false);
    release(arg);
    return NULL;
}

/* Without memory for the items: every part of every GPU in turn. */
static void in_turn(struct nvml *n, struct snap *s, const unsigned *part, unsigned nparts)
{
    for (size_t i = 0; i < s->ngpus; i++)
        for (unsigned k = 0; k < nparts; k++) {
            struct snap_gpu *g = &s->gpus[i];
            unsigned have = nvml_slow_part(n, (unsigned)i, (enum nvml_part)part[k], g);
            g->have = (g->have & ~nvml_part_have((enum nvml_part)part[k])) | have;
        }
}

struct slowcalls *slowcalls_start(struct nvml *n, struct snap *s, unsigned parts)
{
    unsigned list[NVML_PARTS], nparts = 0;
    for (unsigned k = 0; k < NVML_PARTS; k++)
        if (parts & (1u << k))
            list[nparts++] = k;
    if (!nparts || !s->ngpus)
        return NULL;
    struct slowcalls *c = calloc(1, sizeof *c);
    unsigned items = nparts * (unsigned)s->ngpus;
    if (c)
        c->got = calloc(items, sizeof *c->got);
    if (!c || !c->got) {
        free(c);
        in_turn(n, s, list, nparts);
        return NULL;
    }
    c->nvml = n;
    c->s = s;
    for (unsigned k = 0; k < nparts; k++)
        c->part[k] = list[k];
    c->ngpus = (unsigned)s->ngpus;
    c->items = items;
    c->refs = 1;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    /* the first thread; on a single CPU none, they could only take turns */
    cpu_set_t set;
    if (items > 1 && !(sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) < 2))
        start_threads(c, 1, run_first);
    return c;
}

void slowcalls_finish(struct slowcalls *c)
{
    if (!c)
        return;
    take_all(c, false);
    pthread_mutex_lock(&c->mu);
    while (c->done < c->items)
        pthread_cond_wait(&c->cv, &c->mu);
    pthread_mutex_unlock(&c->mu);
    for (unsigned k = 0; k < c->items; k++) {
        struct snap_gpu *g = &c->s->gpus[k % c->ngpus];
        g->have = (g->have & ~nvml_part_have((enum nvml_part)c->part[k / c->ngpus])) | c->got[k];
    }
    release(c);
}
