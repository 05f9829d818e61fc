/* NVML process records: every layout the drivers have written decodes to
 * the same processes, and impossible records are dropped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "gpu/nvml_api.h"
#include "gpu/nvproc.h"

#define GiB (1ULL << 30)

/* What a driver writing `stride`-byte records leaves in a sentinel-filled
 * buffer for these (pid, used) pairs. */
static void driver_writes(unsigned char *buf, size_t cap, size_t stride, const uint32_t *pids,
                          const uint64_t *used, unsigned n)
{
    memset(buf, NVPROC_SENTINEL, cap);
    for (unsigned i = 0; i < n; i++) {
        unsigned char *r = buf + i * stride;
        memset(r, 0, stride);
        memcpy(r, &pids[i], 4);
        memcpy(r + 8, &used[i], 8);
        if (stride >= 24)
            memset(r + 16, 0xff, 8);
    }
}

static void layout_535_is_detected(void **st)
{
    (void)st;
    unsigned char buf[8 * NVPROC_MAX_STRIDE];
    uint32_t pids[3] = {1234, 5678, 91011};
    uint64_t used[3] = {3 * GiB, 512ULL << 20, 7 * GiB};
    struct nvproc_entry e[3];

    /* a current driver: 24-byte records */
    driver_writes(buf, sizeof buf, 24, pids, used, 3);
    assert_int_equal(nvproc_stride(buf, 3, 24), 24);
    assert_int_equal(nvproc_decode(buf, 3, 24, 80 * GiB, e, NULL), 3);
    assert_int_equal(e[2].pid, 91011);
    assert_true(e[2].used == 7 * GiB);

    /* a 535 driver writing 32-byte records through the same call */
    driver_writes(buf, sizeof buf, 32, pids, used, 3);
    assert_int_equal(nvproc_stride(buf, 3, 24), 32);
    assert_int_equal(nvproc_decode(buf, 3, 32, 80 * GiB, e, NULL), 3);
    assert_int_equal(e[1].pid, 5678);
    assert_true(e[1].used == 512ULL << 20);

    /* reading it with the wrong stride is what scrambled other tools */
    unsigned rej = 0;
    unsigned kept = nvproc_decode(buf, 3, 24, 80 * GiB, e, &rej);
    assert_true(kept < 3 || e[1].pid != 5678);
}

static void v1_records(void **st)
{
    (void)st;
    unsigned char buf[4 * NVPROC_MAX_STRIDE];
    uint32_t pids[2] = {42, 43};
    uint64_t used[2] = {GiB, 2 * GiB};
    struct nvproc_entry e[2];
    driver_writes(buf, sizeof buf, 16, pids, used, 2);
    assert_int_equal(nvproc_stride(buf, 2, 16), 16);
    assert_int_equal(nvproc_decode(buf, 2, 16, 16 * GiB, e, NULL), 2);
    assert_int_equal(e[1].pid, 43);
}

static void impossible_records_are_dropped(void **st)
{
    (void)st;
    unsigned char buf[8 * NVPROC_MAX_STRIDE];
    uint32_t pids[5] = {0, 4294967295u, 77, 78, 79};
    uint64_t used[5] = {GiB, GiB, 20 * GiB, NVML_VALUE_NOT_AVAILABLE, GiB};
    struct nvproc_entry e[5];
    unsigned rej = 0;
    driver_writes(buf, sizeof buf, 24, pids, used, 5);
    unsigned kept = nvproc_decode(buf, 5, 24, 16 * GiB, e, &rej);
    /* pid 0, pid -1 and 20 GiB on a 16 GiB card go; "not available" stays, unknown */
    assert_int_equal(kept, 2);
    assert_int_equal(rej, 3);
    assert_int_equal(e[0].pid, 78);
    assert_false(e[0].used_known);
    assert_int_equal(e[1].pid, 79);
    assert_true(e[1].used_known && e[1].used == GiB);
}

static void empty_list(void **st)
{
    (void)st;
    unsigned char buf[NVPROC_MAX_STRIDE];
    memset(buf, NVPROC_SENTINEL, sizeof buf);
    assert_int_equal(nvproc_stride(buf, 0, 24), 24);
    assert_int_equal(nvproc_decode(buf, 0, 24, GiB, NULL, NULL), 0);
}

static void struct_versions(void **st)
{
    (void)st;
    /* the version field is size | version << 24, not the plain number */
    assert_int_equal(sizeof(nvmlMemory_v2_t), 40);
    assert_int_equal(NVML_MEMORY_V2_VERSION, 40 | (2 << 24));
    assert_int_equal(sizeof(nvmlProcessDetail_v1_t), 32);
    assert_int_equal(sizeof(nvmlProcessInfo_v2_t), 24);
    assert_int_equal(sizeof(nvmlProcessInfo_v1_t), 16);
    assert_int_equal(NVML_PROCESS_DETAIL_LIST_V1_VERSION, 24 | (1 << 24));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(layout_535_is_detected),
        cmocka_unit_test(v1_records),
        cmocka_unit_test(impossible_records_are_dropped),
        cmocka_unit_test(empty_list),
        cmocka_unit_test(struct_versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
