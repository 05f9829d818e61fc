/* The shared host pool's windows: each suspended model gets a window of
 * its own, never overlapping another's, never past the pool; windows given
 * back are used again; a fragmented pool still gives a window in pieces
 * while its free space holds it; the pool says no rather than promising
 * more. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon/hostpool.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

static void no_overlap(const struct hostpool_map *m)
{
    for (unsigned k = 0; k < m->n; k++) {
        assert_true(m->w[k].off + m->w[k].len <= m->size);
        assert_true(m->w[k].off % HOSTPOOL_ALIGN == 0 && m->w[k].len % HOSTPOOL_ALIGN == 0);
        if (k)
            assert_true(m->w[k - 1].off + m->w[k - 1].len <= m->w[k].off);
    }
}

static uint64_t take1(struct hostpool_map *m, unsigned owner, uint64_t n)
{
    struct swapline_window w;
    assert_int_equal(hostpool_take(m, owner, n, &w), 0);
    assert_int_equal(w.n, 1);
    return w.e[0].off;
}

static void windows(void **st)
{
    (void)st;
    struct hostpool_map m = {.size = 1024 * MiB};
    struct swapline_window w;
    assert_int_equal(hostpool_take(&m, 0, 300 * MiB, &w), 0);
    assert_true(w.n == 1 && w.e[0].off == 0 && w.e[0].len == 300 * MiB);
    assert_int_equal(hostpool_take(&m, 1, 301 * MiB, &w), 0);
    assert_true(w.e[0].off == 300 * MiB && w.e[0].len == 302 * MiB); /* rounded up to 2 MiB */
    assert_int_equal(hostpool_take(&m, 2, 500 * MiB, &w), -1);       /* 422 left */
    assert_int_equal(w.n, 0);
    assert_int_equal(hostpool_take(&m, 2, 400 * MiB, &w), 0);
    no_overlap(&m);
    assert_true(hostpool_used(&m) == 1002 * MiB);
    hostpool_give(&m, 0); /* the hole at the front is used again */
    assert_true(take1(&m, 3, 200 * MiB) == 0);
    /* a fast swap used less than NVML counted: the rest is free again */
    hostpool_shrink(&m, 1, 100 * MiB);
    /* holes now: 100 MiB at 200, 202 at 400, 22 at 1002: the smallest that holds it */
    assert_true(take1(&m, 4, 200 * MiB) == 400 * MiB);
    assert_true(take1(&m, 6, 90 * MiB) == 200 * MiB);
    no_overlap(&m);
    /* one window per owner: taking again replaces it */
    uint64_t before = hostpool_used(&m);
    take1(&m, 4, 100 * MiB);
    assert_true(hostpool_used(&m) == before - 100 * MiB);
    hostpool_give(&m, 9); /* nobody's: nothing */
    assert_int_equal(hostpool_take(&m, 5, 0, &w), -1);
    assert_int_equal(hostpool_take(&m, 5, UINT64_MAX, &w), -1);
    no_overlap(&m);
}

/* What the H200 trace met: five models of 7.19 GiB in a 40 GiB pool, the
 * windows of those that came back leaving holes of exactly that size, and
 * a model that grew asking for 7.86 GiB with 18 GiB free. */
static void fragmented(void **st)
{
    (void)st;
    struct hostpool_map m = {.size = 40 * GiB};
    uint64_t win = 7 * GiB + 194 * MiB, grown = 7 * GiB + 880 * MiB;
    for (unsigned i = 0; i < 5; i++)
        take1(&m, i, win);
    hostpool_give(&m, 0);
    hostpool_give(&m, 2); /* holes: 7.19 at 0, 7.19 between 1 and 3, 4 GiB at the end */
    struct swapline_window w;
    assert_int_equal(hostpool_take(&m, 0, grown, &w), 0);
    assert_int_equal(w.n, 2); /* the two largest holes */
    assert_true(swapline_window_len(&w) == grown);
    no_overlap(&m);
    /* what moved was less: the first bytes stay, the rest is free again */
    hostpool_shrink(&m, 0, win + 100 * MiB);
    uint64_t used = hostpool_used(&m);
    assert_true(used == 3 * win + win + 100 * MiB); /* 1, 3, 4 and 0 */
    /* the window's first piece whole, then 100 MiB of the second */
    unsigned pieces = 0;
    for (unsigned k = 0; k < m.n; k++)
        if (m.w[k].owner == 0) {
            pieces++;
            assert_true(m.w[k].seq == 0 ? m.w[k].len == win : m.w[k].len == 100 * MiB);
        }
    assert_int_equal(pieces, 2);
    /* more than all that is free: no */
    assert_int_equal(hostpool_take(&m, 2, 40 * GiB - used + 2 * MiB, &w), -1);
    assert_int_equal(hostpool_take(&m, 2, 40 * GiB - used, &w), 0);
    no_overlap(&m);
    assert_true(hostpool_used(&m) == 40 * GiB);
    hostpool_shrink(&m, 2, 0);
    assert_true(hostpool_used(&m) == used);
}

/* A window's part for each of a model's processes, in order. */
static void parts(void **st)
{
    (void)st;
    struct swapline_window w = {2, {{100 * MiB, 50 * MiB}, {400 * MiB, 30 * MiB}}}, p;
    swapline_window_part(&w, 0, 20 * MiB, &p);
    assert_true(p.n == 1 && p.e[0].off == 100 * MiB && p.e[0].len == 20 * MiB);
    swapline_window_part(&w, 20 * MiB, 40 * MiB, &p); /* over the seam */
    assert_true(p.n == 2 && p.e[0].off == 120 * MiB && p.e[0].len == 30 * MiB &&
                p.e[1].off == 400 * MiB && p.e[1].len == 10 * MiB);
    swapline_window_part(&w, 60 * MiB, 100 * MiB, &p); /* w ends first */
    assert_true(p.n == 1 && p.e[0].off == 410 * MiB && p.e[0].len == 20 * MiB);
    swapline_window_part(&w, 80 * MiB, 1, &p);
    assert_int_equal(p.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(windows),
        cmocka_unit_test(fragmented),
        cmocka_unit_test(parts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
