/* gate: the C side of the trampolines (gate_x86_64.S). Each slot holds one
 * real function; a thread entering counts itself in flight, and if the gate
 * is closed, counts itself out and sleeps until it opens. Closing adds a
 * hold (the gate is closed while any is held: a suspend, and each memory
 * of another process this one maps while that memory is away, share.c),
 * then waits for the count to reach zero: both sides use sequentially
 * consistent atomics, so a thread either sees the gate closed or is seen in
 * flight. A call made from inside another (a driver callback calling the
 * driver) does not wait: its outer call is already counted. */
#include "shim/gate.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "host/clock.h"

#define SLOTS 1024
#define DEPTH 64

static _Atomic(void *) real_of[SLOTS];
static unsigned nslots;
static atomic_bool incomplete;
static pthread_mutex_t slot_mu = PTHREAD_MUTEX_INITIALIZER;

static atomic_uint holds;
static atomic_uint inflight;
static atomic_ulong entries; /* outermost calls ever: whether the process is busy with the GPU */
static pthread_mutex_t wait_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reopened = PTHREAD_COND_INITIALIZER;

static __thread struct {
    unsigned depth;
    uintptr_t ret[DEPTH];
} frames;

#if defined(__x86_64__)
extern const char vram_gate_stubs[];
#define STUB(i) ((void *)(vram_gate_stubs + 16 * (i)))

bool gate_supported(void)
{
    return true;
}
#else
#define STUB(i) NULL
bool gate_supported(void)
{
    return false;
}
#endif

void *gate_wrap(void *fn)
{
    if (!fn || !gate_supported())
        return fn;
    pthread_mutex_lock(&slot_mu);
    void *out = NULL;
    for (unsigned i = 0; i < nslots && !out; i++)
        if (atomic_load_explicit(&real_of[i], memory_order_relaxed) == fn)
            out = STUB(i);
    if (!out && nslots < SLOTS) {
        atomic_store_explicit(&real_of[nslots], fn, memory_order_release);
        out = STUB(nslots);
        nslots++;
    }
    pthread_mutex_unlock(&slot_mu);
    if (!out) {
        atomic_store(&incomplete, true);
        return fn;
    }
    return out;
}

unsigned long gate_entries(void)
{
    return atomic_load_explicit(&entries, memory_order_relaxed);
}

unsigned gate_inflight(void)
{
    return atomic_load(&inflight);
}

bool gate_complete(void)
{
    return !atomic_load(&incomplete);
}

/* One more call on this thread's stack; the outermost is counted in
 * flight, and waits while the gate is closed. */
static void enter(uintptr_t ret)
{
    if (frames.depth == DEPTH) {
        fputs("libvramcap: driver calls nested 64 deep; cannot go on\n", stderr);
        abort();
    }
    if (frames.depth == 0) {
        atomic_fetch_add_explicit(&entries, 1, memory_order_relaxed);
        for (;;) {
            atomic_fetch_add(&inflight, 1);
            if (!atomic_load(&holds))
                break;
            atomic_fetch_sub(&inflight, 1);
            pthread_mutex_lock(&wait_mu);
            while (atomic_load(&holds))
                pthread_cond_wait(&reopened, &wait_mu);
            pthread_mutex_unlock(&wait_mu);
        }
    }
    frames.ret[frames.depth++] = ret;
}

static uintptr_t leave(void)
{
    uintptr_t ret = frames.ret[--frames.depth];
    if (frames.depth == 0)
        atomic_fetch_sub(&inflight, 1);
    return ret;
}

__attribute__((visibility("hidden"))) void *vram_gate_enter(unsigned long slot, uintptr_t ret)
{
    enter(ret);
    return atomic_load_explicit(&real_of[slot], memory_order_acquire);
}

__attribute__((visibility("hidden"))) uintptr_t vram_gate_leave(void)
{
    return leave();
}

int gate_scope_enter(void)
{
    if (!gate_supported())
        return 0;
    enter(0);
    return 1;
}

void gate_scope_leave(int *token)
{
    if (*token)
        leave();
}

int gate_close(unsigned timeout_ms, unsigned *busy)
{
    atomic_fetch_add(&holds, 1);
    uint64_t until = clock_mono_ms() + timeout_ms;
    /* calls in flight are mostly waits on the GPU: poll, it is a one-off */
    while (atomic_load(&inflight) > 0) {
        if (clock_mono_ms() >= until) {
            if (busy)
                *busy = atomic_load(&inflight);
            gate_open();
            return -1;
        }
        nanosleep(&(struct timespec){0, 100000}, NULL);
    }
    return 0;
}

void gate_open(void)
{
    pthread_mutex_lock(&wait_mu);
    unsigned h = atomic_load(&holds);
    if (h && atomic_fetch_sub(&holds, 1) == 1)
        pthread_cond_broadcast(&reopened);
    pthread_mutex_unlock(&wait_mu);
}
