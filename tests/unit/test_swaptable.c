/* Fast swap's table of movable memory: an application's handle keeps
 * meaning the same allocation while the driver's handle behind it changes
 * with each swap; lookups by handle, driver handle and address stay right
 * through growth and removals; reservations find their addresses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "shim/swaptable.h"

static void handles_survive_swaps(void **st)
{
    (void)st;
    struct swaptable t;
    swaptable_init(&t);
    uint64_t ids[300];
    for (unsigned i = 0; i < 300; i++) { /* past the first growth, and more */
        ids[i] = swaptable_new_id(&t);
        struct swaptable_entry p = {.id = ids[i],
                                    .real = 0x10000 + i,
                                    .size = 2 << 20,
                                    .va = 0x7f0000000000ULL + (uint64_t)i * (2 << 20)};
        assert_int_equal(swaptable_add(&t, &p), 0);
    }
    /* an id is never a driver handle (those are addresses) */
    for (unsigned i = 0; i < 300; i++)
        assert_null(swaptable_by_real(&t, ids[i]));
    /* a swap out and back in: new driver handles behind the same ids */
    for (unsigned i = 0; i < 300; i++)
        swaptable_by_id(&t, ids[i])->real = 0;
    for (unsigned i = 0; i < 300; i++)
        swaptable_by_id(&t, ids[i])->real = 0x900000 + i;
    for (unsigned i = 0; i < 300; i++) {
        assert_true(swaptable_real_of(&t, ids[i]) == 0x900000 + i);
        assert_true(swaptable_by_real(&t, 0x900000 + i)->id == ids[i]);
        assert_true(swaptable_by_va(&t, 0x7f0000000000ULL + (uint64_t)i * (2 << 20))->id == ids[i]);
    }
    /* a handle we did not make is passed through as it is */
    assert_true(swaptable_real_of(&t, 0x1234) == 0x1234);
    /* removing every other one leaves the rest findable */
    for (unsigned i = 0; i < 300; i += 2)
        swaptable_remove(&t, swaptable_by_id(&t, ids[i]));
    assert_int_equal(t.n, 150);
    for (unsigned i = 0; i < 300; i++)
        assert_true((swaptable_by_id(&t, ids[i]) != NULL) == (i % 2 == 1));
    assert_null(swaptable_by_va(&t, 0)); /* an unmapped entry is not "at 0" */
    swaptable_clear(&t);
}

static void reservations(void **st)
{
    (void)st;
    struct swaptable t;
    swaptable_init(&t);
    for (uint64_t i = 0; i < 40; i++)
        assert_int_equal(swaptable_res_add(&t, (i + 1) << 32, 1ULL << 30), 0);
    assert_int_equal(swaptable_res_of(&t, (5ULL << 32) + (1ULL << 30) - 1), 4);
    assert_int_equal(swaptable_res_of(&t, (5ULL << 32) + (1ULL << 30)), -1); /* one past the end */
    assert_int_equal(swaptable_res_of(&t, 1), -1);
    swaptable_res_del(&t, 5ULL << 32);
    assert_int_equal(swaptable_res_of(&t, 5ULL << 32), -1);
    assert_true(swaptable_res_of(&t, 40ULL << 32) >= 0);
    swaptable_clear(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(handles_survive_swaps),
        cmocka_unit_test(reservations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
