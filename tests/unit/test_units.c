/* Sizes and durations as users type them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/units.h"

static void sizes_use_binary_units(void **st)
{
    (void)st;
    uint64_t v;
    assert_int_equal(units_parse_size("16G", &v), 0);
    assert_true(v == 16ULL << 30);
    assert_int_equal(units_parse_size("1.5GiB", &v), 0);
    assert_true(v == 3ULL << 29);
    assert_int_equal(units_parse_size("512M", &v), 0);
    assert_true(v == 512ULL << 20);
    assert_int_equal(units_parse_size("300mb", &v), 0);
    assert_true(v == 300ULL << 20);
    assert_int_equal(units_parse_size("4096", &v), 0);
    assert_true(v == 4096);
    assert_int_equal(units_parse_size(" 0.45 G ", &v), 0);
    assert_true(v == (uint64_t)(0.45 * (1ULL << 30) + 0.5));
}

static void bad_sizes_are_refused(void **st)
{
    (void)st;
    uint64_t v = 7;
    const char *bad[] = {"",    "G",    "-1G", "1.5.5G",       "12Q",    "nan",
                         "inf", "0x10", "1e3", "99999999999T", "16 G B", NULL};
    for (int i = 0; bad[i]; i++)
        assert_int_equal(units_parse_size(bad[i], &v), -1);
    assert_int_equal(units_parse_size(NULL, &v), -1);
    assert_true(v == 7);
}

static void durations(void **st)
{
    (void)st;
    double d;
    assert_int_equal(units_parse_seconds("2", &d), 0);
    assert_true(d == 2);
    assert_int_equal(units_parse_seconds("500ms", &d), 0);
    assert_true(d == 0.5);
    assert_int_equal(units_parse_seconds("10m", &d), 0);
    assert_true(d == 600);
    assert_int_equal(units_parse_seconds("1h", &d), 0);
    assert_true(d == 3600);
    assert_int_equal(units_parse_seconds("abc", &d), -1);
    assert_int_equal(units_parse_seconds("-1", &d), -1);
    assert_int_equal(units_parse_seconds("1x", &d), -1);
    assert_int_equal(units_parse_seconds("1h30m", &d), 0); /* Go's form, as Ollama's keep_alive */
    assert_true(d == 5400);
    assert_int_equal(units_parse_seconds("1m 30s", &d), 0);
    assert_true(d == 90);
    assert_int_equal(units_parse_seconds("1h30", &d), -1);
    assert_int_equal(units_parse_seconds("1h-30m", &d), -1);
    assert_int_equal(units_parse_seconds("1h30x", &d), -1);
    assert_int_equal(units_parse_seconds("", &d), -1);
    assert_int_equal(units_parse_seconds("h", &d), -1);
}

static void token_counts(void **st)
{
    (void)st;
    uint64_t v;
    assert_int_equal(units_parse_tokens("128k", &v), 0);
    assert_int_equal(v, 131072);
    assert_int_equal(units_parse_tokens("32K", &v), 0);
    assert_int_equal(v, 32768);
    assert_int_equal(units_parse_tokens("1M", &v), 0);
    assert_int_equal(v, 1048576);
    assert_int_equal(units_parse_tokens("1.5k", &v), 0);
    assert_int_equal(v, 1536);
    assert_int_equal(units_parse_tokens("4096", &v), 0);
    assert_int_equal(v, 4096);
    assert_int_equal(units_parse_tokens("1.5", &v), -1);
    assert_int_equal(units_parse_tokens("-4k", &v), -1);
    assert_int_equal(units_parse_tokens("4g", &v), -1);
    assert_int_equal(units_parse_tokens("k", &v), -1);
    assert_int_equal(units_parse_tokens("", &v), -1);
}

static void printing(void **st)
{
    (void)st;
    char b[32];
    assert_string_equal(units_fmt_size(16ULL << 30, b, sizeof b), "16.0 GiB");
    assert_string_equal(units_fmt_size(1610612736ULL, b, sizeof b), "1.50 GiB");
    assert_string_equal(units_fmt_size(512, b, sizeof b), "512 B");
    assert_string_equal(units_fmt_gib(483183820ULL, b, sizeof b), "0.45");
}

/* A duration printed in a hint must read back as the same duration. */
static void durations_round_trip(void **st)
{
    (void)st;
    static const double v[] = {0, 1.5, 45, 90, 600, 5400, 7200};
    static const char *const want[] = {"0s", "1.5s", "45s", "90s", "10m", "90m", "2h"};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char b[32];
        double back;
        assert_string_equal(units_fmt_duration(v[i], b, sizeof b), want[i]);
        assert_int_equal(units_parse_seconds(b, &back), 0);
        assert_true(back == v[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sizes_use_binary_units),
        cmocka_unit_test(bad_sizes_are_refused),
        cmocka_unit_test(durations),
        cmocka_unit_test(token_counts),
        cmocka_unit_test(printing),
        cmocka_unit_test(durations_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
