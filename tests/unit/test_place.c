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
        cmocka_unit_test(promises_are_taken),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
