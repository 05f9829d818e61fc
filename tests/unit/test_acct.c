/* Accounting: the parts add up to the total, nothing counted twice, nothing
 * negative, whatever the driver says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "core/acct.h"

#define GiB (1ULL << 30)
#define MiB (1ULL << 20)

static struct snap_proc P(uint32_t pid, enum snap_role role, uint64_t used) {
    struct snap_proc p;
    memset(&p, 0, sizeof p);
    p.pid = pid;
    p.role = role;
    p.used = used;
    p.used_known = true;
    return p;
}

static void
sums_to_total(const struct acct *a)
{
    assert_true(a->reserved + a->display + a->workloads + a->other + a->unattributed + a->free ==
                a->total);
}

static void workstation_display_tax(void **st)
{
    (void)st;
    /* the article's card: 16 GiB, 0.45 reserved, Xorg 1.1, gnome-shell 0.5, 0.05 hidden */
    struct snap_proc procs[] = {P(1, SNAP_ROLE_DISPLAY, 1100 * MiB),
                                P(2, SNAP_ROLE_DISPLAY, 500 * MiB)};
    struct snap_gpu g = {0};
    g.mem = (struct snap_mem){16 * GiB, 450 * MiB, 1650 * MiB, 16 * GiB - 2100 * MiB, 2};
    g.procs = procs;
    g.nprocs = 2;
    struct acct a;
    acct_gpu(&g, &a);
    assert_true(a.reserved == 450 * MiB);
    assert_true(a.display == 1600 * MiB);
    assert_true(a.workloads == 0);
    assert_true(a.unattributed == 50 * MiB);
    assert_true(a.free == 16 * GiB - 2100 * MiB);
    assert_true(acct_used(&a) == 2100 * MiB);
    assert_false(a.inconsistent);
    sums_to_total(&a);
}

static void processes_over_used_are_scaled(void **st)
{
    (void)st;
    /* a driver that lists 12 GiB of processes while saying 8 GiB are used */
    struct snap_proc procs[] = {P(1, SNAP_ROLE_WORKLOAD, 9 * GiB),
                                P(2, SNAP_ROLE_DISPLAY, 3 * GiB)};
    struct snap_gpu g = {0};
    g.mem = (struct snap_mem){16 * GiB, 1 * GiB, 8 * GiB, 7 * GiB, 2};
    g.procs = procs;
    g.nprocs = 2;
    struct acct a;
    acct_gpu(&g, &a);
    assert_true(a.inconsistent);
    assert_true(a.unattributed == 0);
    assert_true(a.workloads + a.display == 8 * GiB);
    assert_true(a.workloads == 6 * GiB); /* 9/12 of 8 */
    assert_true(a.listed == 12 * GiB);
    sums_to_total(&a);
}

static void nonsense_counters_are_clamped(void **st)
{
    (void)st;
    struct snap_gpu g = {0};
    /* reserved larger than the card, used larger than what is left */
    g.mem = (struct snap_mem){8 * GiB, 9 * GiB, 5 * GiB, 0, 2};
    struct acct a;
    acct_gpu(&g, &a);
    assert_true(a.reserved == 8 * GiB);
    assert_true(a.free == 0 && a.unattributed == 0);
    assert_true(a.inconsistent);
    sums_to_total(&a);

    g.mem = (struct snap_mem){8 * GiB, 1 * GiB, 9 * GiB, 0, 2};
    acct_gpu(&g, &a);
    assert_true(a.unattributed == 7 * GiB);
    sums_to_total(&a);
}

static void v1_driver_folds_reserved(void **st)
{
    (void)st;
    struct snap_proc procs[] = {P(1, SNAP_ROLE_WORKLOAD, 4 * GiB)};
    struct snap_gpu g = {0};
    g.mem = (struct snap_mem){16 * GiB, 0, 5 * GiB, 11 * GiB, 1};
    g.procs = procs;
    g.nprocs = 1;
    struct acct a;
    acct_gpu(&g, &a);
    assert_true(a.reserved_unknown);
    assert_true(a.reserved == 0);
    assert_true(a.unattributed == 1 * GiB);
    assert_false(a.inconsistent);
    sums_to_total(&a);
}

static void unknown_usage_is_not_counted(void **st)
{
    (void)st;
    struct snap_proc procs[] = {P(1, SNAP_ROLE_WORKLOAD, 2 * GiB), P(2, SNAP_ROLE_OTHER, 0)};
    procs[1].used_known = false;
    procs[1].used = 123; /* garbage the driver left: must be ignored */
    struct snap_gpu g = {0};
    g.mem = (struct snap_mem){16 * GiB, 0, 3 * GiB, 13 * GiB, 2};
    g.procs = procs;
    g.nprocs = 2;
    struct acct a;
    acct_gpu(&g, &a);
    assert_true(a.other == 0);
    assert_true(a.unattributed == 1 * GiB);
    sums_to_total(&a);
}

static void many_random_snapshots_add_up(void **st)
{
    (void)st;
    uint64_t seed = 42;
    for (int iter = 0; iter < 20000; iter++) {
        struct snap_proc procs[6];
        struct snap_gpu g = {0};
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        uint64_t total = (seed >> 20) % (200 * GiB) + 1;
        g.mem.total = total;
        g.mem.version = 1 + (int)(seed & 1);
        seed = seed * 6364136223846793005ULL + 1;
        g.mem.reserved = (seed >> 11) % (total / 2 + 1);
        seed = seed * 6364136223846793005ULL + 1;
        g.mem.used = (seed >> 7) % (total + total / 4 + 1);
        g.mem.free = total > g.mem.used ? total - g.mem.used : 0;
        g.nprocs = (size_t)(seed % 7);
        for (size_t i = 0; i < g.nprocs; i++) {
            seed = seed * 6364136223846793005ULL + 1;
            procs[i] = P((uint32_t)i + 1, (enum snap_role)(seed % 3), (seed >> 5) % total);
            procs[i].used_known = (seed & 16) != 0;
        }
        g.procs = procs;
        struct acct a;
        acct_gpu(&g, &a);
        sums_to_total(&a);
        assert_true(a.reserved <= total && a.free <= total);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(workstation_display_tax),
        cmocka_unit_test(processes_over_used_are_scaled),
        cmocka_unit_test(nonsense_counters_are_clamped),
        cmocka_unit_test(v1_driver_folds_reserved),
        cmocka_unit_test(unknown_usage_is_not_counted),
        cmocka_unit_test(many_random_snapshots_add_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
