/* Joining the driver's list with the host: vanished processes are dropped,
 * processes in other namespaces keep the driver's name, roles are given. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "core/join.h"

/* the fake host: pid 10 is Xorg, pid 20 a python job; 30 is in a container's
 * namespace (only the driver names it); 40 exited between the two reads */
static int fake_host(void *ctx, struct snap_proc *p)
{
    (void)ctx;
    if (p->pid == 10)
        snprintf(p->name, sizeof p->name, "Xorg");
    else if (p->pid == 20)
        snprintf(p->name, sizeof p->name, "python3");
    else
        return -1;
    p->host_known = true;
    return 0;
}

static int fake_driver(void *ctx, uint32_t pid, char *buf, size_t len)
{
    (void)ctx;
    if (pid != 30)
        return -1;
    snprintf(buf, len, "/opt/conda/bin/python");
    return 0;
}

static void join(void **st)
{
    (void)st;
    struct snap_proc procs[4];
    memset(procs, 0, sizeof procs);
    uint32_t pids[4] = {10, 20, 30, 40};
    unsigned types[4] = {SNAP_PT_GRAPHICS, SNAP_PT_COMPUTE, SNAP_PT_COMPUTE, SNAP_PT_COMPUTE};
    for (int i = 0; i < 4; i++) {
        procs[i].pid = pids[i];
        procs[i].types = types[i];
        procs[i].used = 1u << 20;
        procs[i].used_known = true;
    }
    struct snap_gpu g;
    memset(&g, 0, sizeof g);
    g.procs = procs;
    g.nprocs = 4;
    join_procs(&g, &(struct join_lookup){fake_host, fake_driver, NULL});
    assert_int_equal(g.nprocs, 3); /* 40 vanished: skipped, not garbage */
    assert_int_equal(procs[0].role, SNAP_ROLE_DISPLAY);
    assert_int_equal(procs[1].role, SNAP_ROLE_WORKLOAD);
    assert_int_equal(procs[2].pid, 30);
    assert_string_equal(procs[2].name, "python");
    assert_string_equal(procs[2].cmdline, "/opt/conda/bin/python");
    assert_false(procs[2].host_known);
    assert_int_equal(procs[2].role, SNAP_ROLE_WORKLOAD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(join)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
