/* The shared host pool's windows: each suspended model gets a window of
 * its own, never overlapping another's, never past the pool; windows given
 * back are used again; the pool says no rather than promising more. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "daemon/hostpool.h"

#define MiB (1ULL << 20)

static void no_overlap(const struct hostpool_map *m)
{
    for (unsigned k = 0; k < m->n; k++) {
        assert_true(m->w[k].off + m->w[k].len <= m->size);
        assert_true(m->w[k].off % HOSTPOOL_ALIGN == 0 && m->w[k].len % HOSTPOOL_ALIGN == 0);
        if (k)
            assert_true(m->w[k - 1].off + m->w[k - 1].len <= m->w[k].off);
    }
}

static void windows(void **st)
{
    (void)st;
    struct hostpool_map m = {.size = 1024 * MiB};
    uint64_t off, len;
    assert_int_equal(hostpool_take(&m, 0, 300 * MiB, &off, &len), 0);
    assert_true(off == 0 && len == 300 * MiB);
    assert_int_equal(hostpool_take(&m, 1, 301 * MiB, &off, &len), 0);
    assert_true(off == 300 * MiB && len == 302 * MiB); /* rounded up to 2 MiB */
    assert_int_equal(hostpool_take(&m, 2, 500 * MiB, &off, &len), -1); /* 422 left */
    assert_int_equal(hostpool_take(&m, 2, 400 * MiB, &off, &len), 0);
    no_overlap(&m);
    assert_true(hostpool_used(&m) == 1002 * MiB);
    hostpool_give(&m, 0); /* the hole at the front is used again */
    assert_int_equal(hostpool_take(&m, 3, 200 * MiB, &off, &len), 0);
    assert_true(off == 0);
    /* a fast swap used less than NVML counted: the rest is free again */
    hostpool_shrink(&m, 1, 100 * MiB);
    assert_int_equal(hostpool_take(&m, 4, 200 * MiB, &off, &len), 0);
    assert_true(off == 400 * MiB);
    no_overlap(&m);
    /* one window per owner: taking again replaces it */
    uint64_t before = hostpool_used(&m);
    assert_int_equal(hostpool_take(&m, 4, 100 * MiB, &off, &len), 0);
    assert_true(hostpool_used(&m) == before - 100 * MiB);
    hostpool_give(&m, 9); /* nobody's: nothing */
    assert_int_equal(hostpool_take(&m, 5, 0, &off, &len), -1);
    assert_int_equal(hostpool_take(&m, 5, UINT64_MAX, &off, &len), -1);
    no_overlap(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(windows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
