/* The host layer on a fixture /proc tree the test writes itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/proc.h"

static char root[256];

static void put(const char *rel, const char *text, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fwrite(text, 1, len, f);
    fclose(f);
}

/* a literal, embedded NULs included */
#define PUTS(rel, lit) put(rel, lit, sizeof(lit) - 1)

static void mkd(const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    mkdir(path, 0755);
}

static void lnk(const char *target, const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    assert_int_equal(symlink(target, path), 0);
}

static int setup(void **st)
{
    (void)st;
    snprintf(root, sizeof root, "/tmp/vram-test-proc-XXXXXX");
    if (!mkdtemp(root))
        return -1;
    PUTS("stat", "cpu  1 2 3\nbtime 1700000000\nprocesses 5\n");
    /* pid 100: a python job in docker, name with spaces and parentheses */
    mkd("100");
    const char *stat100 = "100 (my (odd) job) S 1 100 100 0 -1 4194560 1 0 0 0 5 6 0 0 20 0 8 0 "
                          "250 1000 20 18446744073709551615\n";
    put("100/stat", stat100, strlen(stat100));
    PUTS("100/status", "Name:\tpython3\nUid:\t0\t0\t0\t0\n");
    PUTS("100/cmdline", "python3\0train.py\0--lr\0"
                        "3e-4\0");
    const char *cg = "0::/system.slice/docker-0123456789abcdef0123456789abcdef0123456789abcdef"
                     "0123456789abcdef.scope\n";
    put("100/cgroup", cg, strlen(cg));
    mkd("100/fd");
    lnk("/dev/nvidia0", "100/fd/5");
    lnk("/dev/nvidiactl", "100/fd/6");
    lnk("/dev/nvidia3", "100/fd/7");
    lnk("/dev/null", "100/fd/0");
    /* pid 200: a zombie holding no files */
    mkd("200");
    const char *stat200 = "200 (defunct) Z 100 200 200 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 300 0 0\n";
    put("200/stat", stat200, strlen(stat200));
    mkd("200/fd");
    /* pid 300: a long name, cut by the kernel at 15 chars in stat */
    mkd("300");
    const char *stat300 =
        "300 (nvidia-persiste) S 1 300 300 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 400 0 0\n";
    put("300/stat", stat300, strlen(stat300));
    PUTS("300/cmdline", "/usr/bin/nvidia-persistenced\0--verbose\0");
    mkd("300/fd");
    lnk("/dev/nvidia0", "300/fd/3");
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static void stat_with_tricky_name(void **st)
{
    (void)st;
    const char *s = "42 (a) b) c) R 7 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12345 0 0\n";
    char comm[64], state;
    uint32_t ppid;
    uint64_t ticks;
    assert_int_equal(hostproc_parse_stat(s, strlen(s), comm, sizeof comm, &state, &ppid, &ticks),
                     0);
    assert_string_equal(comm, "a) b) c");
    assert_int_equal(state, 'R');
    assert_int_equal(ppid, 7);
    assert_true(ticks == 12345);
    /* CPU time and resident pages come with the rest; a line that ends
     * before rss still gives the fields before it */
    struct hostproc_stat all;
    const char *full = "9 (j) S 1 9 9 0 -1 0 0 0 0 0 700 300 0 0 20 0 1 0 555 4096 42\n";
    assert_int_equal(hostproc_parse_stat_all(full, strlen(full), comm, sizeof comm, &all), 0);
    assert_true(all.utime == 700 && all.stime == 300 && all.start_ticks == 555);
    assert_true(all.rss_known && all.rss_pages == 42);
    const char *cut = "9 (j) S 1 9 9 0 -1 0 0 0 0 0 700 300 0 0 20 0 1 0 555\n";
    assert_int_equal(hostproc_parse_stat_all(cut, strlen(cut), comm, sizeof comm, &all), 0);
    assert_false(all.rss_known);
    assert_true(all.start_ticks == 555);
    /* truncated or empty stat files are refused, never read past */
    assert_int_equal(
        hostproc_parse_stat("42 (x) R 1", 10, comm, sizeof comm, &state, &ppid, &ticks), -1);
    assert_int_equal(hostproc_parse_stat("", 0, comm, sizeof comm, &state, &ppid, &ticks), -1);
}

static void fill_from_fixture(void **st)
{
    (void)st;
    struct hostproc_ctx c;
    hostproc_init(&c, root);
    assert_true(c.btime == 1700000000);
    struct snap_proc p = {0};
    p.pid = 100;
    assert_int_equal(hostproc_fill(&c, &p), 0);
    assert_true(p.host_known);
    assert_string_equal(p.name, "my (odd) job");
    assert_string_equal(p.user, "root");
    assert_string_equal(p.cmdline, "python3 train.py --lr 3e-4");
    assert_string_equal(p.container, "docker:0123456789ab");
    assert_int_equal(p.state, SNAP_PS_SLEEPING);
    assert_int_equal(p.ppid, 1);
    assert_true(p.start_time == 1700000000 + 250 / (uint64_t)c.hz);
    /* utime 5 + stime 6 ticks; 20 resident pages */
    assert_true(p.cpu_ms == 11 * 1000 / (uint64_t)c.hz);
    assert_true(p.rss_known);
    assert_true(p.rss == 20 * (uint64_t)sysconf(_SC_PAGESIZE));

    /* the details pane's: the whole command line, the cgroup's path */
    char cmd[64], cg[256];
    assert_int_equal(hostproc_detail(&c, 100, cmd, sizeof cmd, cg, sizeof cg), 0);
    assert_string_equal(cmd, "python3 train.py --lr 3e-4");
    assert_non_null(strstr(cg, "/system.slice/docker-0123456789abcdef"));
    assert_int_equal(hostproc_detail(&c, 999, cmd, sizeof cmd, cg, sizeof cg), -1);

    struct snap_proc z = {0};
    z.pid = 200;
    assert_int_equal(hostproc_fill(&c, &z), 0);
    assert_int_equal(z.state, SNAP_PS_ZOMBIE);

    struct snap_proc l = {0};
    l.pid = 300;
    assert_int_equal(hostproc_fill(&c, &l), 0);
    assert_string_equal(l.name, "nvidia-persistenced");

    /* a pid that is not there is reported gone, with nothing half-filled */
    struct snap_proc gone = {0};
    gone.pid = 999;
    snprintf(gone.name, sizeof gone.name, "stale");
    assert_int_equal(hostproc_fill(&c, &gone), -1);
    assert_false(gone.host_known);
    assert_string_equal(gone.name, "");
}

static void device_file_holders(void **st)
{
    (void)st;
    struct hostproc_ctx c;
    hostproc_init(&c, root);
    struct hostproc_holder *h = NULL;
    int n = hostproc_nvidia_holders(&c, &h);
    assert_int_equal(n, 2);
    uint64_t m100 = 0, m300 = 0;
    for (int i = 0; i < n; i++) {
        if (h[i].pid == 100)
            m100 = h[i].minors;
        if (h[i].pid == 300)
            m300 = h[i].minors;
    }
    assert_true(m100 == ((1ULL << 0) | (1ULL << 3))); /* nvidiactl is no GPU */
    assert_true(m300 == 1ULL);
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stat_with_tricky_name),
        cmocka_unit_test(fill_from_fixture),
        cmocka_unit_test(device_file_holders),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
