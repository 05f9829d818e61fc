/* The WDDM path: Windows's GPU counters, recorded on a machine as typeperf
 * writes them (tests/fixtures/wddm/windows-desktop.csv), through the same
 * parsing as vram.exe's (core/wddm.c), joined to the processes NVML listed
 * without a figure (examples/windows-desktop.json's). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/wddm.h"

#define NVIDIA_LUID 0x0000D1A5ULL
#define IGPU_LUID   0x0000C2F1ULL

/* What winpdh.c gets from PDH: each column's instance (between the
 * parentheses of its counter path) and its value, from the recording. */
static void load_recording(struct wddm_set *set)
{
    FILE *f = fopen(SRC_ROOT "/tests/fixtures/wddm/windows-desktop.csv", "r");
    assert_non_null(f);
    static char head[1 << 15], row[1 << 15];
    assert_non_null(fgets(head, sizeof head, f));
    assert_non_null(fgets(row, sizeof row, f));
    fclose(f);
    char *h = strchr(head, ','), *r = strchr(row, ',');
    while (h && r) {
        char *open = strchr(h, '('), *close = strchr(h, ')');
        assert_non_null(open);
        assert_non_null(close);
        char inst[128];
        snprintf(inst, sizeof inst, "%.*s", (int)(close - open - 1), open + 1);
        wddm_add(set, inst, strtod(r + 2, NULL)); /* past ,"  */
        h = strchr(close, ',');
        r = strchr(r + 1, ',');
    }
}

static struct snap_proc na(uint32_t pid)
{
    struct snap_proc p;
    memset(&p, 0, sizeof p);
    p.pid = pid;
    p.types = SNAP_PT_COMPUTE | SNAP_PT_GRAPHICS;
    return p; /* used_known false: WDDM's "not available" */
}

static void instance_names(void **st)
{
    (void)st;
    uint32_t pid;
    uint64_t luid;
    assert_int_equal(wddm_parse_instance("pid_1384_luid_0x00000000_0x0000D1A5_phys_0", &pid, &luid),
                     0);
    assert_int_equal(pid, 1384);
    assert_true(luid == NVIDIA_LUID);
    assert_int_equal(wddm_parse_instance("pid_8_luid_0x00000001_0xFFFFFFFF_phys_1", &pid, &luid), 0);
    assert_true(luid == 0x1FFFFFFFFULL);
    const char *bad[] = {"",
                         "_Total",
                         "pid_0_luid_0x00000000_0x0000D1A5_phys_0",
                         "pid_99999999999_luid_0x00000000_0x0000D1A5_phys_0",
                         "pid_12_luid_0x100000000_0x0_phys_0",
                         "pid_12_luid_0x0_0x0_phys_0_eng_3",
                         "pid_12_luid_0x_0x0_phys_0",
                         "luid_0x00000000_0x0000D1A5_phys_0",
                         NULL};
    for (int i = 0; bad[i]; i++)
        assert_int_equal(wddm_parse_instance(bad[i], &pid, &luid), -1);
}

static void recording_fills_what_nvml_hid(void **st)
{
    (void)st;
    static struct wddm_set set;
    memset(&set, 0, sizeof set);
    load_recording(&set);
    assert_int_equal(set.rejected, 0);
    struct snap_proc procs[] = {na(4194404), na(4194408), na(4194412), na(4194416), na(4194420),
                                na(4194499)};
    struct snap_gpu g;
    memset(&g, 0, sizeof g);
    g.procs = procs;
    g.nprocs = 6;
    /* the NVIDIA card's adapter is the one holding NVML's processes, not the
     * integrated GPU where dwm.exe and explorer.exe also have memory */
    assert_true(wddm_luid_of(&g, &set) == NVIDIA_LUID);
    assert_int_equal(wddm_apply(&g, &set, NVIDIA_LUID), 5);
    assert_true(procs[0].used_known && procs[0].used_wddm);
    assert_int_equal(procs[0].used, 966367641); /* dwm.exe's dedicated usage on the card */
    assert_int_equal(procs[4].used, 53687091);
    /* a process the counters do not name keeps "n/a": no guess */
    assert_false(procs[5].used_known);
    assert_false(procs[5].used_wddm);
}

static void figures_from_the_driver_are_kept(void **st)
{
    (void)st;
    static struct wddm_set set;
    memset(&set, 0, sizeof set);
    wddm_add(&set, "pid_40_luid_0x00000000_0x0000D1A5_phys_0", 100);
    wddm_add(&set, "pid_40_luid_0x00000000_0x0000D1A5_phys_1", 50); /* a linked adapter */
    assert_int_equal(set.n, 1);
    assert_int_equal(set.v[0].dedicated, 150);
    struct snap_proc procs[] = {na(40)};
    procs[0].used_known = true;
    procs[0].used = 7;
    struct snap_gpu g = {.procs = procs, .nprocs = 1};
    assert_int_equal(wddm_apply(&g, &set, NVIDIA_LUID), 0);
    assert_int_equal(procs[0].used, 7);
    wddm_add(&set, "garbage", 1);
    wddm_add(&set, "pid_44_luid_0x00000000_0x0000D1A5_phys_0", -1);
    assert_int_equal(set.rejected, 2);
}

/* Two adapters that hold as many of NVML's processes: vram cannot tell
 * which is the card, and says nothing rather than guess. */
static void a_tie_is_no_answer(void **st)
{
    (void)st;
    static struct wddm_set set;
    memset(&set, 0, sizeof set);
    wddm_add(&set, "pid_40_luid_0x00000000_0x0000D1A5_phys_0", 100);
    wddm_add(&set, "pid_40_luid_0x00000000_0x0000C2F1_phys_0", 100);
    struct snap_proc procs[] = {na(40)};
    struct snap_gpu g = {.procs = procs, .nprocs = 1};
    assert_true(wddm_luid_of(&g, &set) == 0);
    assert_int_equal(wddm_apply(&g, &set, 0), 0);
    assert_false(procs[0].used_known);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(instance_names),
        cmocka_unit_test(recording_fills_what_nvml_hid),
        cmocka_unit_test(figures_from_the_driver_are_kept),
        cmocka_unit_test(a_tie_is_no_answer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
