/* The allocation table: what goes in comes out, by key and kind, through
 * growth and many deletions, and its per-kind totals stay right. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shim/allocs.h"

static void put_take(void **st)
{
    (void)st;
    struct allocs t;
    allocs_init(&t);
    struct allocs_entry e;
    assert_int_equal(allocs_take(&t, 0x1000, ALLOCS_LINEAR, &e), -1);
    assert_int_equal(allocs_put(&t, 0x1000, ALLOCS_LINEAR, 2 << 20, 0), 0);
    /* the same number as a VMM handle is another entry */
    assert_int_equal(allocs_put(&t, 0x1000, ALLOCS_VMM, 4 << 20, 1), 0);
    assert_int_equal(allocs_get(&t, 0x1000, ALLOCS_VMM, &e), 0);
    assert_true(e.bytes == 4 << 20 && e.dev == 1);
    assert_int_equal(allocs_take(&t, 0x1000, ALLOCS_LINEAR, &e), 0);
    assert_true(e.bytes == 2 << 20);
    assert_int_equal(allocs_take(&t, 0x1000, ALLOCS_LINEAR, &e), -1);
    assert_true(t.bytes[ALLOCS_VMM] == 4 << 20 && t.bytes[ALLOCS_LINEAR] == 0);
    allocs_free(&t);
}

static void many_with_churn(void **st)
{
    (void)st;
    struct allocs t;
    allocs_init(&t);
    /* 100k allocations, every other one freed, in rounds: growth and
     * deleted slots both exercised */
    for (uint64_t round = 0; round < 4; round++) {
        for (uint64_t i = 0; i < 25000; i++)
            assert_int_equal(allocs_put(&t, (round << 40) | (i << 21), ALLOCS_ASYNC, 1 << 21, 0),
                             0);
        for (uint64_t i = 0; i < 25000; i += 2)
            assert_int_equal(allocs_take(&t, (round << 40) | (i << 21), ALLOCS_ASYNC, NULL), 0);
    }
    assert_int_equal(t.live, 4 * 12500);
    assert_true(t.bytes[ALLOCS_ASYNC] == 4ULL * 12500 * (1 << 21));
    for (uint64_t round = 0; round < 4; round++)
        for (uint64_t i = 1; i < 25000; i += 2)
            assert_int_equal(allocs_get(&t, (round << 40) | (i << 21), ALLOCS_ASYNC, NULL), 0);
    assert_true(t.cap < 4 * 131072); /* rehashing keeps deleted slots from piling up */
    allocs_clear(&t);
    assert_int_equal(t.live, 0);
    assert_int_equal(allocs_get(&t, 1ULL << 21, ALLOCS_ASYNC, NULL), -1);
    allocs_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(put_take),
        cmocka_unit_test(many_with_churn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
