/* The memory of libvramcap's stream-ordered pools, against a driver that
 * records what it is asked (the simulated one runs every stream at once,
 * so it cannot tell a wrong order): a block freed on a stream is reused on
 * it without a wait; on another stream only after a wait for the free's
 * event, or not at all when the pool may not add waits; once a
 * synchronize says the free is done, by anyone, without a wait; a
 * thread's own default stream is never taken for the same stream; frees
 * merge back into whole chunks, which a shrink gives back only once their
 * frees are done; a destroyed stream's handle reused is not trusted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "shim/arena.h"
#include "shim/driver.h"
#include "shim/freeevent.h"
#include "shim/ownmem.h"

/* ---- a driver that records ---- */

#define CTX ((CUcontext)0x1000)
static int nevents, waits, syncs, live_chunks;
static CUevent waited_on;
static CUstream waited_by;
static int done[64]; /* by event: complete */
static uint64_t next_va = 0x7f0000000000ULL;

static CUresult ctx_get(CUcontext *c)
{
    *c = CTX;
    return CUDA_SUCCESS;
}

static CUresult ev_create(CUevent *e, unsigned flags)
{
    (void)flags;
    *e = (CUevent)(uintptr_t)(++nevents);
    return CUDA_SUCCESS;
}

static CUresult ev_destroy(CUevent e)
{
    (void)e;
    return CUDA_SUCCESS;
}

static CUresult ev_query(CUevent e)
{
    return done[(uintptr_t)e] ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

static CUresult ev_sync(CUevent e)
{
    (void)e;
    syncs++;
    return CUDA_SUCCESS;
}

static CUresult wait_event(CUstream s, CUevent e, unsigned flags)
{
    (void)flags;
    waits++;
    waited_on = e;
    waited_by = s;
    return CUDA_SUCCESS;
}

static CUresult mode_swap(CUstreamCaptureMode *m)
{
    (void)m;
    return CUDA_SUCCESS;
}

CUresult (*real_cuCtxGetCurrent)(CUcontext *) = ctx_get;
CUresult (*real_cuEventCreate)(CUevent *, unsigned) = ev_create;
CUresult (*real_cuEventDestroy_v2)(CUevent) = ev_destroy;
CUresult (*real_cuEventQuery)(CUevent) = ev_query;
CUresult (*real_cuEventSynchronize)(CUevent) = ev_sync;
CUresult (*real_cuStreamWaitEvent)(CUstream, CUevent, unsigned) = wait_event;
CUresult (*real_cuThreadExchangeStreamCaptureMode)(CUstreamCaptureMode *) = mode_swap;

CUresult ownmem_chunk(int dev, size_t size, uint64_t access, CUdeviceptr *dptr, uint64_t *got)
{
    (void)dev;
    (void)access;
    *got = (size + (2 << 20) - 1) & ~(uint64_t)((2 << 20) - 1);
    *dptr = next_va;
    next_va += *got + (64 << 20);
    live_chunks++;
    return CUDA_SUCCESS;
}

void ownmem_chunk_free(CUdeviceptr dptr)
{
    (void)dptr;
    live_chunks--;
}

CUresult ownmem_chunk_access(CUdeviceptr dptr, uint64_t readers, uint64_t writers)
{
    (void)dptr;
    (void)readers;
    (void)writers;
    return CUDA_SUCCESS;
}

/* ---- the tests ---- */

#define S1 ((CUstream)0x51)
#define S2 ((CUstream)0x52)

static struct arena arena(void)
{
    struct arena a;
    memset(&a, 0, sizeof a);
    a.waits = true;
    return a;
}

/* a block of size from a, its chunk made if needed */
static struct arena_block *get(struct arena *a, uint64_t size, CUstream s)
{
    struct arena_block *b = arena_alloc(a, size, s);
    if (!b && arena_grow(a, size) == CUDA_SUCCESS)
        b = arena_alloc(a, size, s);
    assert_non_null(b);
    return b;
}

/* everything given back: what is handed out, freed, every free done */
static void drain(struct arena *a)
{
    struct arena_block *held[64];
    unsigned n = 0;
    for (struct arena_chunk *c = a->chunks; c; c = c->next)
        for (struct arena_block *b = c->first; b && n < 64; b = b->next)
            if (!b->free)
                held[n++] = b;
    for (unsigned i = 0; i < n; i++)
        arena_free(a, held[i], NULL, NULL);
    arena_done(a, CTX, true, NULL);
    arena_settle(a, false);
    arena_shrink(a, 0);
    assert_null(a->chunks);
}

/* freed on s, an event recorded there as ownpool.c does */
static void put(struct arena *a, struct arena_block *b, CUstream s)
{
    struct freeevent *e = freeevent_get();
    assert_non_null(e);
    done[(uintptr_t)e->ev] = 0;
    arena_free(a, b, s, e);
}

static void same_stream_reuses_without_waiting(void **st)
{
    (void)st;
    struct arena a = arena();
    struct arena_block *b = get(&a, 1 << 20, S1);
    uint64_t va = b->va;
    put(&a, b, S1);
    waits = 0;
    b = arena_alloc(&a, 1 << 20, S1);
    assert_non_null(b);
    assert_true(b->va == va);
    assert_int_equal(waits, 0);
    /* the legacy stream, under either name, is one stream */
    put(&a, b, NULL);
    b = arena_alloc(&a, 1 << 20, CU_STREAM_LEGACY);
    assert_true(b->va == va);
    assert_int_equal(waits, 0);
    assert_int_equal((int)a.used, 1 << 20);
    drain(&a);
}

static void another_stream_waits_for_the_free(void **st)
{
    (void)st;
    struct arena a = arena();
    struct arena_block *b = get(&a, 4096, S1);
    uint64_t va = b->va;
    put(&a, b, S1);
    CUevent ev = b->event->ev;
    waits = 0;
    b = arena_alloc(&a, 4096, S2);
    assert_true(b->va == va);
    assert_int_equal(waits, 1);
    assert_ptr_equal(waited_on, ev);
    assert_ptr_equal(waited_by, S2);
    /* a thread's own default stream is never the same stream */
    put(&a, b, CU_STREAM_PER_THREAD);
    b = arena_alloc(&a, 4096, CU_STREAM_PER_THREAD);
    assert_int_equal(waits, 2);
    /* without internal dependencies, a free not known done is passed over */
    put(&a, b, S1);
    a.waits = false;
    b = arena_alloc(&a, 4096, S2);
    assert_true(b == NULL || b->va != va);
    assert_int_equal(waits, 2);
    drain(&a);
}

static void done_frees_need_no_wait(void **st)
{
    (void)st;
    struct arena a = arena();
    struct arena_block *b = get(&a, 8192, S1);
    uint64_t va = b->va;
    put(&a, b, S1);
    arena_done(&a, CTX, false, S2); /* another stream's synchronize: nothing known */
    waits = 0;
    b = arena_alloc(&a, 8192, S2);
    assert_int_equal(waits, 1);
    put(&a, b, S1);
    arena_done(&a, CTX, false, S1); /* that stream's */
    b = arena_alloc(&a, 8192, S2);
    assert_true(b->va == va);
    assert_int_equal(waits, 1);
    put(&a, b, S1);
    arena_done(&a, CTX, true, NULL); /* the context's */
    b = arena_alloc(&a, 8192, S2);
    assert_int_equal(waits, 1);
    drain(&a);
}

static void frees_merge_and_chunks_go_back_when_done(void **st)
{
    (void)st;
    struct arena a = arena();
    live_chunks = 0;
    struct arena_block *x = get(&a, 512 << 10, S1), *y = get(&a, 512 << 10, S1);
    struct arena_block *z = get(&a, 64 << 20, S2); /* a chunk of its own */
    assert_int_equal(live_chunks, 2);
    assert_true(y->va == x->va + (512 << 10)); /* one 2 MiB chunk, cut */
    uint64_t reserved = a.reserved;
    put(&a, x, S1);
    put(&a, y, S1);
    put(&a, z, S2);
    assert_int_equal((int)a.used, 0);
    /* frees not known done: nothing can go */
    arena_shrink(&a, 0);
    assert_int_equal(live_chunks, 2);
    assert_true(a.reserved == reserved);
    /* the small chunk's frees have completed; the large one's has not */
    for (int e = 1; e <= nevents; e++)
        done[e] = 1;
    done[(uintptr_t)z->event->ev] = 0;
    arena_shrink(&a, 0);
    assert_int_equal(live_chunks, 1);
    assert_true(a.reserved == (64ULL << 20));
    /* once it is done too, a shrink down to what is kept */
    done[(uintptr_t)z->event->ev] = 1;
    arena_shrink(&a, 64ULL << 20);
    assert_int_equal(live_chunks, 1);
    arena_shrink(&a, 0);
    assert_int_equal(live_chunks, 0);
    assert_true(a.reserved == 0);
}

static void a_destroyed_streams_handle_is_not_trusted(void **st)
{
    (void)st;
    struct arena a = arena();
    struct arena_block *b = get(&a, 4096, S1);
    put(&a, b, S1);
    arena_stream_gone(&a, S1);
    waits = 0;
    b = arena_alloc(&a, 4096, S1); /* a new stream with the old handle */
    assert_int_equal(waits, 1);
    drain(&a);
}

static uint64_t seen[4];
static unsigned nseen;

static void saw(uint64_t va, void *arg)
{
    (void)arg;
    if (nseen < 4)
        seen[nseen++] = va;
}

static void idle_chunks_are_named(void **st)
{
    (void)st;
    struct arena a = arena();
    get(&a, 4096, S1); /* its chunk is in use */
    struct arena_block *z = get(&a, 32 << 20, S1);
    uint64_t zva = z->va;
    put(&a, z, S1); /* this one's is not */
    arena_each_idle(&a, saw, NULL);
    assert_int_equal(nseen, 1);
    assert_true(seen[0] == zva);
    drain(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_stream_reuses_without_waiting),
        cmocka_unit_test(another_stream_waits_for_the_free),
        cmocka_unit_test(done_frees_need_no_wait),
        cmocka_unit_test(frees_merge_and_chunks_go_back_when_done),
        cmocka_unit_test(a_destroyed_streams_handle_is_not_trusted),
        cmocka_unit_test(idle_chunks_are_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
