/* The address map of libvramcap's pools: every live block is found by its
 * address through growth, removals and reuse of deleted slots, and an
 * address that was never put (or was taken) is not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "shim/addrmap.h"

#define N 20000

static void finds_what_lives(void **st)
{
    (void)st;
    struct addrmap m = {0};
    static int vals[N];
    uint64_t base = 0x7f0000000000ULL;
    for (unsigned i = 0; i < N; i++) /* pool blocks: 512-byte steps */
        assert_int_equal(addrmap_put(&m, base + (uint64_t)i * 512, &vals[i]), 0);
    for (unsigned i = 0; i < N; i++)
        assert_ptr_equal(addrmap_get(&m, base + (uint64_t)i * 512, 0), &vals[i]);
    assert_null(addrmap_get(&m, base + 256, 0));
    assert_null(addrmap_get(&m, 0, 0));
    assert_null(addrmap_get(&m, 1, 0));
    /* every other one freed, then allocated again at once: deleted slots
     * fill and the table never fills up with them */
    for (int round = 0; round < 50; round++) {
        for (unsigned i = 0; i < N; i += 2)
            assert_ptr_equal(addrmap_get(&m, base + (uint64_t)i * 512, 1), &vals[i]);
        for (unsigned i = 0; i < N; i += 2)
            assert_null(addrmap_get(&m, base + (uint64_t)i * 512, 0));
        for (unsigned i = 1; i < N; i += 2)
            assert_ptr_equal(addrmap_get(&m, base + (uint64_t)i * 512, 0), &vals[i]);
        for (unsigned i = 0; i < N; i += 2)
            assert_int_equal(addrmap_put(&m, base + (uint64_t)i * 512, &vals[i]), 0);
    }
    assert_true(m.cap < 8 * N);
    for (unsigned i = 0; i < N; i++)
        assert_ptr_equal(addrmap_get(&m, base + (uint64_t)i * 512, 1), &vals[i]);
    assert_null(addrmap_get(&m, base, 0));
    free(m.s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(finds_what_lives)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
