/* vram top's pieces without a screen: the filter's words, the tree's
 * nesting (which parents on no GPU show, the branch lines, loops in the
 * parents), the columns a width keeps and their sorts, CPU % over two
 * readings, and each process's share of its GPU from the driver's samples. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "top/top_cols.h"
#include "top/top_filter.h"
#include "top/top_tree.h"
#include "probe/activity.h"
#include "probe/cpuuse.h"

static struct top_row row(uint32_t pid, unsigned gpu, const char *name, const char *user,
                          uint32_t ppid)
{
    struct top_row r;
    memset(&r, 0, sizeof r);
    r.gpu = gpu;
    r.proc.pid = pid;
    r.proc.ppid = ppid;
    r.proc.host_known = user != NULL;
    snprintf(r.proc.name, sizeof r.proc.name, "%s", name);
    snprintf(r.proc.cmdline, sizeof r.proc.cmdline, "/usr/bin/%s --serve", name);
    snprintf(r.proc.user, sizeof r.proc.user, "%s", user ? user : "");
    r.proc.role = SNAP_ROLE_WORKLOAD;
    return r;
}

static bool matches(const char *filter, const struct top_row *r)
{
    struct top_filter f;
    char err[200];
    assert_int_equal(top_filter_parse(filter, &f, err, sizeof err), 0);
    return top_filter_match(&f, r);
}

static void filter_words(void **st)
{
    (void)st;
    struct top_row a = row(100, 1, "python3", "alice", 1);
    assert_true(matches("", &a));
    assert_true(matches("user:alice", &a));
    assert_false(matches("user:ali", &a)); /* a user is a whole name */
    assert_true(matches("name:PYTHON", &a)); /* either case */
    assert_true(matches("name:--serve", &a)); /* the command line too */
    assert_true(matches("gpu:1 role:workload", &a));
    assert_false(matches("gpu:0 role:workload", &a));
    assert_true(matches("gpu:0 gpu:1", &a)); /* one key: any of its terms */
    assert_false(matches("!user:alice", &a));
    assert_true(matches("!role:display alice", &a)); /* a word: in the user too */
    assert_true(matches("pid:100", &a));
    assert_false(matches("model:qwen", &a));
    snprintf(a.proc.model, sizeof a.proc.model, "qwen");
    assert_true(matches("model:qwen", &a));
    /* another user's process the host does not show: no user to match */
    struct top_row hidden = row(200, 0, "x", NULL, 0);
    assert_false(matches("user:alice", &hidden));

    struct top_filter f;
    char err[200];
    assert_int_equal(top_filter_parse("colour:red", &f, err, sizeof err), -1);
    assert_non_null(strstr(err, "'colour': no such filter; use user:"));
    assert_int_equal(top_filter_parse("gpu:one", &f, err, sizeof err), -1);
    assert_non_null(strstr(err, "gpu: takes a number"));
    assert_int_equal(top_filter_parse("role:gaming", &f, err, sizeof err), -1);
    assert_non_null(strstr(err, "display, workload or other"));
    assert_int_equal(top_filter_parse("user:", &f, err, sizeof err), -1);
    assert_int_equal(top_filter_parse("a b c d e f g h i", &f, err, sizeof err), -1);
    assert_non_null(strstr(err, "at most 8 words"));
}

/* The host as the tree asks it: a fixed table of parents. */
static const struct {
    uint32_t pid, ppid;
    const char *name;
} host_table[] = {
    {10, 1, "bash"},     /* ran two jobs: 11 (no GPU) and 20 */
    {11, 10, "server"},  /* a server whose workers 21, 22 hold the GPU */
    {12, 10, "launch"},  /* a launcher with one job under it: not shown */
    {30, 31, "loop-a"},  /* 30 and 31: each the other's parent */
    {31, 30, "loop-b"},
};
static int lookups;

static int host(void *ctx, struct snap_proc *p)
{
    (void)ctx;
    lookups++;
    for (size_t i = 0; i < sizeof host_table / sizeof host_table[0]; i++)
        if (host_table[i].pid == p->pid) {
            p->ppid = host_table[i].ppid;
            p->host_known = true;
            snprintf(p->name, sizeof p->name, "%s", host_table[i].name);
            return 0;
        }
    return -1;
}

static void tree_nests(void **st)
{
    (void)st;
    /* in sort order: 21 first, then 40 (its own root), 20, 22, 23 under
     * GPU process 20, 25 under the launcher, 32 in a loop of parents */
    struct top_row in[] = {
        row(21, 0, "worker", "u", 11), row(40, 0, "lone", "u", 1),  row(20, 0, "job", "u", 10),
        row(22, 1, "worker", "u", 11), row(23, 0, "child", "u", 20), row(25, 0, "job2", "u", 12),
        row(32, 0, "looped", "u", 30),
    };
    struct top_row *out;
    size_t n;
    lookups = 0;
    assert_int_equal(top_tree_build(in, sizeof in / sizeof in[0], host, NULL, &out, &n), 0);
    struct {
        uint32_t pid;
        unsigned depth;
        bool context;
        uint32_t more;
    } want[] = {
        {10, 0, true, 0},      /* bash: where the server's and the job's branches meet */
        {11, 1, true, 1},      /* the server (bash has more after it) */
        {21, 2, false, 1 | 2}, /* its workers: 21, then 22 last */
        {22, 2, false, 1},
        {20, 1, false, 1},     /* the job, a GPU process, with its child */
        {23, 2, false, 1},
        {25, 1, false, 0},     /* under bash (the launcher joins nothing): last */
        {40, 0, false, 0},
        {32, 0, false, 0},     /* the loop ends the walk: a root */
    };
    assert_int_equal(n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(out[i].proc.pid, want[i].pid);
        assert_int_equal(out[i].depth, want[i].depth);
        assert_int_equal(out[i].context, want[i].context);
        assert_int_equal(out[i].more, want[i].more);
    }
    assert_string_equal(out[1].proc.name, "server");
    assert_true(lookups <= 6); /* each parent asked once */
    free(out);

    /* no host: only GPU processes nest */
    assert_int_equal(top_tree_build(in, sizeof in / sizeof in[0], NULL, NULL, &out, &n), 0);
    assert_int_equal(n, sizeof in / sizeof in[0]);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(out[i].depth, out[i].proc.pid == 23 ? 1u : 0u);
    free(out);
}

static void columns_fit(void **st)
{
    (void)st;
    enum top_col c[TOP_COL_COUNT];
    size_t n = top_cols_fit(80, true, c);
    const enum top_col at80[] = {TOP_COL_PID, TOP_COL_USER, TOP_COL_GPU,  TOP_COL_VRAM, TOP_COL_SM,
                                 TOP_COL_CPU, TOP_COL_RSS,  TOP_COL_TIME, TOP_COL_COMMAND};
    assert_int_equal(n, sizeof at80 / sizeof at80[0]);
    assert_memory_equal(c, at80, sizeof at80);
    assert_int_equal(top_cols_fit(200, true, c), TOP_COL_COUNT);
    /* without video engines, no ENC or DEC */
    n = top_cols_fit(200, false, c);
    assert_int_equal(n, TOP_COL_COUNT - 2);
    for (size_t i = 0; i < n; i++)
        assert_true(c[i] != TOP_COL_ENC && c[i] != TOP_COL_DEC);
    /* the narrowest: PID and COMMAND at least */
    n = top_cols_fit(20, true, c);
    assert_int_equal(c[n - 1], TOP_COL_COMMAND);

    char buf[32];
    assert_string_equal(top_fmt_elapsed(59, buf, sizeof buf), "0:59");
    assert_string_equal(top_fmt_elapsed(3723, buf, sizeof buf), "1:02:03");
    assert_string_equal(top_fmt_elapsed(2 * 86400 + 5 * 3600, buf, sizeof buf), "2d05h");
    assert_int_equal(top_col_parse("memory"), TOP_COL_VRAM);
    assert_int_equal(top_col_parse("cpu"), TOP_COL_CPU);
    assert_int_equal(top_col_parse("colour"), -1);
}

static void columns_sort(void **st)
{
    (void)st;
    struct top_row a = row(1, 0, "a", "u", 0), b = row(2, 0, "b", "u", 0);
    a.proc.cpu_known = true, a.proc.cpu_pct = 5;
    b.proc.cpu_known = true, b.proc.cpu_pct = 150;
    assert_true(top_col_cmp(TOP_COL_CPU, &b, &a) < 0); /* the larger first */
    b.proc.cpu_known = false;
    assert_true(top_col_cmp(TOP_COL_CPU, &a, &b) < 0); /* unknown last */
    assert_true(top_col_cmp(TOP_COL_COMMAND, &a, &b) < 0); /* names: the alphabet */
    a.proc.start_time = 100, b.proc.start_time = 50;
    assert_true(top_col_cmp(TOP_COL_TIME, &b, &a) < 0); /* the longest running first */
    assert_true(top_col_cmp(TOP_COL_PID, &a, &b) < 0);
    char buf[32];
    assert_string_equal(top_col_cell(TOP_COL_CPU, &b, 0, buf, sizeof buf), "-");
    assert_string_equal(top_col_cell(TOP_COL_SM, &a, 0, buf, sizeof buf), "-");
    a.proc.util_known = true, a.proc.sm_util = 42;
    assert_string_equal(top_col_cell(TOP_COL_SM, &a, 0, buf, sizeof buf), "42");
    assert_string_equal(top_col_cell(TOP_COL_TIME, &a, 3823, buf, sizeof buf), "1:02:03");
}

static void cpu_over_two_readings(void **st)
{
    (void)st;
    struct cpuuse c = {0};
    struct snap_proc p[2] = {{.pid = 7, .host_known = true, .start_time = 1000, .cpu_ms = 500},
                             {.pid = 8, .host_known = true, .start_time = 1000, .cpu_ms = 0}};
    struct snap_gpu g = {.procs = p, .nprocs = 2};
    struct snap s = {.gpus = &g, .ngpus = 1};
    cpuuse_apply(&c, &s, 10000);
    assert_false(p[0].cpu_known); /* one reading: no rate yet */
    p[0].cpu_ms = 2500;           /* 2 s of CPU in 1 s: two cores */
    p[1].start_time = 1001;       /* pid 8 again, another process */
    p[1].cpu_ms = 300;
    cpuuse_apply(&c, &s, 11000);
    assert_true(p[0].cpu_known);
    assert_true(p[0].cpu_pct > 199.9 && p[0].cpu_pct < 200.1);
    assert_false(p[1].cpu_known);
    cpuuse_apply(&c, &s, 11000); /* the same instant: no rate, not a division by 0 */
    assert_false(p[0].cpu_known);
    cpuuse_free(&c);
}

static void share_from_samples(void **st)
{
    (void)st;
    struct activity a = {0};
    struct activity_seen seen[] = {
        {.pid = 5, .busy_us = 9000000, .at = {5, 9000000, 70, 30, 0, 4}},
        {.pid = 6, .busy_us = 1000000, .at = {6, 1000000, 90, 10, 0, 0}}, /* old */
    };
    a.seen = malloc(sizeof seen);
    memcpy(a.seen, seen, sizeof seen);
    a.n = 2;
    a.have = true;
    struct snap_proc p[3] = {{.pid = 5}, {.pid = 6}, {.pid = 7}};
    struct snap_gpu g = {.procs = p, .nprocs = 3};
    activity_apply(&a, &g, true, 10000000);
    assert_true(g.have & SNAP_HAVE_ACTIVITY);
    assert_true(p[0].util_known && p[0].sm_util == 70 && p[0].mem_util == 30 && p[0].dec_util == 4);
    /* a sample older than ACTIVITY_FRESH_US: it did no work since */
    assert_true(p[1].util_known && p[1].sm_util == 0);
    assert_true(p[1].busy_us == 1000000); /* but when it last worked stays */
    assert_true(p[2].util_known && p[2].sm_util == 0); /* no sample: 0, known */
    activity_free(&a);
    /* a driver that keeps no samples: unknown */
    struct activity none = {0};
    struct snap_proc q = {.pid = 5};
    struct snap_gpu g2 = {.procs = &q, .nprocs = 1};
    activity_apply(&none, &g2, true, 10000000);
    assert_false(q.util_known);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(filter_words),     cmocka_unit_test(tree_nests),
        cmocka_unit_test(columns_fit),      cmocka_unit_test(columns_sort),
        cmocka_unit_test(cpu_over_two_readings), cmocka_unit_test(share_from_samples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
