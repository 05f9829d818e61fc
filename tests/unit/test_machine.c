/* The simulated machine's file: examples load, mistakes are reported with
 * the place and what is wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/machine.h"

static struct sim_machine m;
static char err[512];

static int load_text(const char *text)
{
    char path[] = "/tmp/vram-machine-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    int rc = sim_machine_load(path, &m, err, sizeof err);
    unlink(path);
    return rc;
}

static void examples_load(void **st)
{
    (void)st;
    assert_int_equal(sim_machine_load(SRC_ROOT "/examples/workstation.json", &m, err, sizeof err),
                     0);
    assert_int_equal(m.ngpus, 1);
    assert_true(m.gpus[0].memory == 16ULL << 30);
    assert_int_equal(m.gpus[0].nprocs, 2);
    assert_true(m.gpus[0].display_active);
    assert_int_equal(sim_machine_load(SRC_ROOT "/examples/server-8xh200.json", &m, err, sizeof err),
                     0);
    assert_int_equal(m.ngpus, 8);
}

static void syntax_error_has_line_and_column(void **st)
{
    (void)st;
    assert_int_equal(load_text("{\n  \"gpus\": [\n    {\"name\": \"x\",, }\n  ]\n}\n"), -1);
    assert_non_null(strstr(err, ":3:"));
}

static void semantic_errors_name_the_field(void **st)
{
    (void)st;
    assert_int_equal(load_text("{\"gpus\": [{\"name\": \"x\", \"memory\": \"lots\"}]}"), -1);
    assert_non_null(strstr(err, "gpus[0].memory"));
    assert_non_null(strstr(err, "not a size"));

    assert_int_equal(load_text("{\"gpus\": [{\"name\": \"x\", \"memroy\": \"1G\"}]}"), -1);
    assert_non_null(strstr(err, "gpus[0].memroy: unknown key"));

    assert_int_equal(load_text("{\"gpus\": [{\"name\": \"x\"}]}"), -1);
    assert_non_null(strstr(err, "needs at least"));

    assert_int_equal(load_text("{\"gpus\": [{\"name\": \"x\", \"memory\": \"1G\", \"processes\":"
                               " [{\"pid\": 5, \"name\": \"a\", \"used\": \"2G\"}]}]}"),
                     -1);
    assert_non_null(strstr(err, "exceed memory"));

    assert_int_equal(load_text("{\"gpus\": [{\"name\": \"x\", \"memory\": \"1G\", \"processes\":"
                               " [{\"pid\": 0, \"name\": \"a\"}]}]}"),
                     -1);
    assert_non_null(strstr(err, "pid 0"));

    assert_int_equal(load_text("[1, 2]"), -1);
    assert_non_null(strstr(err, "top level"));
    assert_int_equal(load_text("{\"gpus\": [], \"gpus\": []}"), -1); /* duplicate key */
}

static void absent_functions(void **st)
{
    (void)st;
    assert_int_equal(load_text("{\"absent\": [\"nvmlDeviceGetMemoryInfo_v2\"], \"gpus\": "
                               "[{\"name\": \"x\", \"memory\": 1073741824}]}"),
                     0);
    assert_true(sim_machine_absent(&m, "nvmlDeviceGetMemoryInfo_v2"));
    assert_false(sim_machine_absent(&m, "nvmlDeviceGetMemoryInfo"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(examples_load),
        cmocka_unit_test(syntax_error_has_line_and_column),
        cmocka_unit_test(semantic_errors_name_the_field),
        cmocka_unit_test(absent_functions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
