/* Placement: the GPU with the most room that can hold the job. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/place.h"

#define GiB (1ULL << 30)

static void most_room_wins(void **st)
{
    (void)st;
    uint64_t room[] = {6 * GiB, 20 * GiB, 12 * GiB};
    assert_int_equal(place_best(room, 3, 10 * GiB), 1);
    assert_int_equal(place_best(room, 3, 21 * GiB), -1);
    assert_int_equal(place_best(room, 3, 0), 1);
    uint64_t tie[] = {8 * GiB, 8 * GiB};
    assert_int_equal(place_best(tie, 2, GiB), 0);
    assert_int_equal(place_best(room, 0, GiB), -1);
}

static void several_gpus_with_the_most_room(void **st)
{
    (void)st;
    uint64_t room[] = {6 * GiB, 20 * GiB, 12 * GiB, 12 * GiB, 2 * GiB};
    unsigned out[5];
    assert_int_equal(place_best_n(room, 5, 10 * GiB, 2, out), 2);
    assert_int_equal(out[0], 1); /* in index order */
    assert_int_equal(out[1], 2); /* a tie goes to the lower index */
    assert_int_equal(place_best_n(room, 5, 10 * GiB, 3, out), 3);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 2);
    assert_int_equal(out[2], 3);
    /* only three hold 10 GiB: four is none at all */
    assert_int_equal(place_best_n(room, 5, 10 * GiB, 4, out), -1);
    assert_int_equal(place_best_n(room, 5, 0, 5, out), 5);
    assert_int_equal(out[4], 4);
    assert_int_equal(place_best_n(room, 5, 0, 6, out), -1);
    assert_int_equal(place_best_n(room, 5, 0, 0, out), -1);
}

static void promises_are_taken(void **st)
{
    (void)st;
    assert_true(place_room(10 * GiB, 4 * GiB) == 6 * GiB);
    assert_true(place_room(4 * GiB, 10 * GiB) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(most_room_wins),
        cmocka_unit_test(several_gpus_with_the_most_room),
        cmocka_unit_test(promises_are_taken),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
