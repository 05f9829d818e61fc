/* The SPANK plugin's plugstack.conf arguments (src/slurm/spankconf.c): a
 * typo refuses the plugin, saying what it takes, rather than leaving a
 * node without its caps or its epilog. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "slurm/spankconf.h"

static int parse(struct spankconf *c, char *err, size_t len, int n, ...)
{
    char *argv[16];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        argv[i] = va_arg(ap, char *);
    va_end(ap);
    return spankconf_parse(n, argv, "/usr/bin/vram", c, err, len);
}

static void defaults(void **st)
{
    (void)st;
    struct spankconf c;
    char err[256];
    assert_int_equal(parse(&c, err, sizeof err, 0), 0);
    assert_string_equal(c.vram, "/usr/bin/vram");
    assert_true(c.swap && c.epilog);
    assert_true(c.wait == 0 && c.grace == 5);
    assert_int_equal(c.nenv, 0);
}

static void arguments(void **st)
{
    (void)st;
    struct spankconf c;
    char err[256];
    assert_int_equal(parse(&c, err, sizeof err, 6, "vram=/opt/vram/bin/vram", "swap=no",
                           "wait=10m", "epilog=no", "grace=1s", "env=VRAM_RUN_DIR=/run/vram"),
                     0);
    assert_string_equal(c.vram, "/opt/vram/bin/vram");
    assert_false(c.swap);
    assert_false(c.epilog);
    assert_true(c.wait == 600 && c.grace == 1);
    assert_int_equal(c.nenv, 1);
    assert_string_equal(c.env[0], "VRAM_RUN_DIR=/run/vram");
}

static void refused(void **st)
{
    (void)st;
    struct spankconf c;
    char err[256];
    assert_int_equal(parse(&c, err, sizeof err, 1, "swpa=no"), -1);
    assert_non_null(strstr(err, "'swpa=no' is not an argument of spank_vram.so; it takes vram=PATH"));
    assert_int_equal(parse(&c, err, sizeof err, 1, "swap"), -1); /* no value */
    assert_int_equal(parse(&c, err, sizeof err, 1, "swap=maybe"), -1);
    assert_non_null(strstr(err, "'swap=maybe': give yes or no"));
    assert_int_equal(parse(&c, err, sizeof err, 1, "vram=vram"), -1); /* not a full path */
    assert_non_null(strstr(err, "give the full path"));
    assert_int_equal(parse(&c, err, sizeof err, 1, "grace=1h"), -1); /* past 600 s */
    assert_int_equal(parse(&c, err, sizeof err, 1, "wait=soon"), -1);
    assert_int_equal(parse(&c, err, sizeof err, 1, "env=NOVALUE"), -1);
    assert_int_equal(parse(&c, err, sizeof err, 1, "env==x"), -1);
    assert_int_equal(parse(&c, err, sizeof err, 1, "vramx=/x"), -1); /* a key's prefix is not it */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),
        cmocka_unit_test(arguments),
        cmocka_unit_test(refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
