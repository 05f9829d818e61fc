/* GPU lists and sizes per GPU as users type them: vram run's --gpus and
 * --vram, libvramcap's VRAM_CAP. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/gpuspec.h"

#define GiB (1ULL << 30)
#define MiB (1ULL << 20)

static void a_number_is_how_many(void **st)
{
    (void)st;
    struct gpuspec_gpus g;
    assert_int_equal(gpuspec_parse_gpus("2", &g), 0);
    assert_int_equal(g.count, 2);
    assert_false(g.named);
    assert_int_equal(gpuspec_parse_gpus(" 64 ", &g), 0);
    assert_int_equal(g.count, 64);
}

static void a_list_names_them_in_order(void **st)
{
    (void)st;
    struct gpuspec_gpus g;
    assert_int_equal(gpuspec_parse_gpus("3,1", &g), 0);
    assert_true(g.named);
    assert_int_equal(g.count, 2);
    assert_string_equal(g.name[0], "3");
    assert_string_equal(g.name[1], "1");
    /* one name alone is a list when it is no number: a UUID */
    assert_int_equal(gpuspec_parse_gpus("GPU-3f1c2a9e", &g), 0);
    assert_true(g.named);
    assert_int_equal(g.count, 1);
    assert_string_equal(g.name[0], "GPU-3f1c2a9e");
    assert_int_equal(gpuspec_parse_gpus("0, GPU-3f1c2a9e ,7", &g), 0);
    assert_int_equal(g.count, 3);
    assert_string_equal(g.name[1], "GPU-3f1c2a9e");
    /* what is no number is a name, for the caller to find or refuse */
    assert_int_equal(gpuspec_parse_gpus("-1", &g), 0);
    assert_true(g.named);
    /* "5," is a list of one with an empty name after it: refused */
    assert_int_equal(gpuspec_parse_gpus("5,", &g), -1);
}

static void bad_gpu_lists_are_refused(void **st)
{
    (void)st;
    struct gpuspec_gpus g;
    const char *bad[] = {"", "0", "65", "99999999999", ",", "0,,1", " , ", NULL};
    for (int i = 0; bad[i]; i++)
        assert_int_equal(gpuspec_parse_gpus(bad[i], &g), -1);
    assert_int_equal(gpuspec_parse_gpus(NULL, &g), -1);
    char longname[GPUSPEC_NAME + 8];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(gpuspec_parse_gpus(longname, &g), -1);
    /* 64 names fit, 65 do not */
    char list[400] = "";
    for (int i = 0; i < 64; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", i ? "," : "", i);
    assert_int_equal(gpuspec_parse_gpus(list, &g), 0);
    assert_int_equal(g.count, 64);
    snprintf(list + strlen(list), sizeof list - strlen(list), ",64");
    assert_int_equal(gpuspec_parse_gpus(list, &g), -1);
}

static void one_size_for_every_gpu(void **st)
{
    (void)st;
    struct gpuspec_sizes z;
    assert_int_equal(gpuspec_parse_sizes("20G", &z), 0);
    assert_true(gpuspec_uniform(&z));
    assert_true(gpuspec_size_for(&z, 0, 0) == 20 * GiB);
    assert_true(gpuspec_size_for(&z, 5, 7) == 20 * GiB);
}

static void sizes_by_position(void **st)
{
    (void)st;
    struct gpuspec_sizes z;
    assert_int_equal(gpuspec_parse_sizes("20G, 512M", &z), 0);
    assert_false(gpuspec_uniform(&z));
    assert_false(z.keyed);
    assert_int_equal(z.n, 2);
    assert_true(gpuspec_size_for(&z, 0, 9) == 20 * GiB);
    assert_true(gpuspec_size_for(&z, 1, 9) == 512 * MiB);
    assert_true(gpuspec_size_for(&z, 2, 9) == 0); /* none for a third */
}

static void sizes_by_gpu_index(void **st)
{
    (void)st;
    struct gpuspec_sizes z;
    assert_int_equal(gpuspec_parse_sizes("3:20G,1 : 1.5G", &z), 0);
    assert_true(z.keyed);
    assert_int_equal(z.n, 2);
    assert_true(gpuspec_size_for(&z, 0, 3) == 20 * GiB);
    assert_true(gpuspec_size_for(&z, 0, 1) == 3 * GiB / 2);
    assert_true(gpuspec_size_for(&z, 1, 0) == 0);
    char keys[32];
    gpuspec_fmt_keys(&z, keys, sizeof keys);
    assert_string_equal(keys, "3,1");
    gpuspec_fmt_keys(&z, keys, 2); /* cut short, still a string */
    assert_string_equal(keys, "3");
    /* a single keyed size is for that GPU only */
    assert_int_equal(gpuspec_parse_sizes("2:4G", &z), 0);
    assert_false(gpuspec_uniform(&z));
    assert_true(gpuspec_size_for(&z, 0, 2) == 4 * GiB);
    assert_true(gpuspec_size_for(&z, 0, 0) == 0);
}

static void bad_size_lists_are_refused(void **st)
{
    (void)st;
    struct gpuspec_sizes z;
    const char *bad[] = {"",        "0",         "lots",   "4G,",    ",4G",   "0:4G,2G",
                         "4G,0:2G", "0:4G,0:2G", "64:4G",  "-1:4G",  "a:4G",  ":4G",
                         "0:",      "0:0",       "1:2:3G", "4G,,2G", "4G 2G", NULL};
    for (int i = 0; bad[i]; i++)
        assert_int_equal(gpuspec_parse_sizes(bad[i], &z), -1);
    assert_int_equal(gpuspec_parse_sizes(NULL, &z), -1);
    assert_int_equal(gpuspec_parse_sizes("63:4G", &z), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_number_is_how_many),       cmocka_unit_test(a_list_names_them_in_order),
        cmocka_unit_test(bad_gpu_lists_are_refused),  cmocka_unit_test(one_size_for_every_gpu),
        cmocka_unit_test(sizes_by_position),          cmocka_unit_test(sizes_by_gpu_index),
        cmocka_unit_test(bad_size_lists_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
