/* The vram GRES of a Slurm job, as slurmctld keeps its request and its
 * allocation (src/core/gresreq.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "core/gresreq.h"

#define GiB (1024ULL * 1024 * 1024)

static void found(const char *s, uint64_t count, const char *type)
{
    struct gresreq g;
    assert_int_equal(gresreq_parse(s, "vram", &g), 0);
    assert_true(g.found);
    assert_int_equal(g.count, count);
    assert_string_equal(g.type, type);
}

static void requests(void **st)
{
    (void)st;
    found("gres:vram:6G", 6 * GiB, "");                 /* --gres=vram:6G, Slurm 22.05 */
    found("gres/vram:6G", 6 * GiB, "");                 /* the same, Slurm 23.02 on */
    found("gres:gpu:1,gres:vram:512M", 512ULL << 20, ""); /* beside gres/gpu */
    found("gres:vram:gpu1:6G", 6 * GiB, "gpu1");        /* typed: one entry per GPU */
    found("vram:6442450944", 6 * GiB, "");              /* the allocation, in bytes */
    found("gres:vram:6g", 6 * GiB, "");                 /* suffixes in either case */
    found("gres:vram", 1, "");                          /* a count left out is 1 */
    found("gres:vram:gpu0", 1, "gpu0");
    /* two entries add up; their type stays only if they agree */
    found("gres:vram:gpu0:1G,gres:vram:gpu1:2G", 3 * GiB, "");
    found("gres:vram:1T", 1024 * GiB, "");
}

static void others(void **st)
{
    (void)st;
    struct gresreq g;
    assert_int_equal(gresreq_parse("gres:gpu:1,gres:shard:4", "vram", &g), 0);
    assert_false(g.found);
    assert_int_equal(gresreq_parse("gres:vramx:6G", "vram", &g), 0); /* another name */
    assert_false(g.found);
    assert_int_equal(gresreq_parse(NULL, "vram", &g), 0);
    assert_false(g.found);
    assert_int_equal(gresreq_parse("", "vram", &g), 0);
    assert_false(g.found);
    /* another GRES's odd entry is not vram's business */
    assert_int_equal(gresreq_parse("gres:gpu:a:b:c:d,gres:vram:1G", "vram", &g), 0);
    assert_int_equal(g.count, GiB);
}

static void refused(void **st)
{
    (void)st;
    struct gresreq g;
    assert_int_equal(gresreq_parse("gres:vram:a:b:c", "vram", &g), -1);    /* too many parts */
    assert_int_equal(gresreq_parse("gres:vram:gpu0:6Q", "vram", &g), -1);  /* a bad count */
    assert_int_equal(gresreq_parse("gres:vram::6G", "vram", &g), -1);      /* an empty type */
    assert_int_equal(gresreq_parse("gres:vram:99999999999999999999", "vram", &g), -1);
    assert_int_equal(gresreq_parse("gres:vram:16777216P", "vram", &g), -1); /* past 2^64 */
    assert_int_equal(gresreq_parse("gres:vram:16383P,gres:vram:16383P", "vram", &g), -1);
    char longtype[200];
    memset(longtype, 'x', sizeof longtype);
    memcpy(longtype, "vram:", 5);
    memcpy(longtype + sizeof longtype - 4, ":1G", 4);
    assert_int_equal(gresreq_parse(longtype, "vram", &g), -1);
}

static void counts(void **st)
{
    (void)st;
    uint64_t v;
    assert_int_equal(gresreq_count("6K", 2, &v), 0);
    assert_int_equal(v, 6144);
    assert_int_equal(gresreq_count("6KB", 3, &v), -1);
    assert_int_equal(gresreq_count("", 0, &v), -1);
    assert_int_equal(gresreq_count("-1", 2, &v), -1);
    assert_int_equal(gresreq_count("1.5G", 4, &v), -1); /* Slurm counts are whole */
    assert_int_equal(gresreq_count("18446744073709551615", 20, &v), 0);
    assert_int_equal(gresreq_count("18446744073709551616", 20, &v), -1);
    assert_int_equal(gresreq_gpu_of("gpu3"), 3);
    assert_int_equal(gresreq_gpu_of("gpu"), -1);
    assert_int_equal(gresreq_gpu_of("gpu3x"), -1);
    assert_int_equal(gresreq_gpu_of("h200"), -1);
    assert_int_equal(gresreq_gpu_of(""), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(requests),
        cmocka_unit_test(others),
        cmocka_unit_test(refused),
        cmocka_unit_test(counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
