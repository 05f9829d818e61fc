/* Containers from /proc/PID/cgroup, as each runtime writes it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "host/cgroup.h"

static void check(const char *text, const char *want_id, const char *want_path)
{
    char path[256], id[80];
    assert_int_equal(cgroup_parse(text, strlen(text), path, sizeof path, id, sizeof id), 0);
    assert_string_equal(id, want_id);
    if (want_path)
        assert_string_equal(path, want_path);
}

static void runtimes(void **st)
{
    (void)st;
    check("0::/user.slice/user-1000.slice/session-2.scope\n", "",
          "/user.slice/user-1000.slice/session-2.scope");
    check(
        "0::/system.slice/docker-4f6ab2c1d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0."
        "scope\n",
        "docker:4f6ab2c1d3e4", NULL);
    check(
        "12:memory:/docker/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"
        "11:cpu,cpuacct:/docker/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"
        "0::/\n",
        "docker:0123456789ab", NULL);
    check("0::/kubepods.slice/kubepods-burstable.slice/"
          "kubepods-burstable-pod1b2c3d4e_5f60_4a1b_9c2d_3e4f5a6b7c8d.slice/"
          "cri-containerd-aabbccddeeff00112233445566778899aabbccddeeff00112233445566778899.scope\n",
          "containerd:aabbccddeeff", NULL);
    check("0::/kubepods.slice/kubepods-besteffort.slice/"
          "kubepods-besteffort-pod1b2c3d4e_5f60_4a1b_9c2d_3e4f5a6b7c8d.slice\n",
          "pod:1b2c3d4e-5f60-4a1b-9c2d-3e4f5a6b7c8d", NULL);
    check(
        "0::/machine.slice/libpod-99887766554433221100aabbccddeeff99887766554433221100aabbccddeeff."
        "scope/container\n",
        "podman:998877665544", NULL);
    check("0::/lxc.payload.mybox\n", "lxc:mybox", NULL);
    check("0::/system.slice/"
          "crio-0011223344556677889900aabbccddeeff0011223344556677889900aabbccdd.scope\n",
          "crio:001122334455", NULL);
}

static void garbage_is_not_a_cgroup(void **st)
{
    (void)st;
    char path[64], id[32];
    assert_int_equal(cgroup_parse("hello world", 11, path, sizeof path, id, sizeof id), -1);
    assert_int_equal(cgroup_parse("", 0, path, sizeof path, id, sizeof id), -1);
    /* an embedded NUL or a path longer than the buffer never overflows */
    char big[2048];
    memset(big, 'a', sizeof big);
    memcpy(big, "0::/", 4);
    assert_int_equal(cgroup_parse(big, sizeof big, path, sizeof path, id, sizeof id), 0);
    assert_true(strlen(path) < sizeof path);
}

/* Slurm's job cgroups, as its cgroup plugins name them */
static void slurm_jobs(void **st)
{
    (void)st;
    const char *v1 = "12:memory:/slurm/uid_1000/job_42/step_0/task_0\n"
                     "11:freezer:/slurm/uid_1000/job_42/step_0\n0::/\n";
    assert_true(cgroup_slurm_job(v1, strlen(v1), 42));
    assert_false(cgroup_slurm_job(v1, strlen(v1), 4));  /* job_4 is not job_42 */
    assert_false(cgroup_slurm_job(v1, strlen(v1), 421));
    const char *v2 = "0::/system.slice/slurmstepd.scope/job_7/step_batch/user/task_0\n";
    assert_true(cgroup_slurm_job(v2, strlen(v2), 7));
    const char *node = "4:devices:/slurm_n1/uid_0/job_9\n"; /* several slurmd on one host */
    assert_true(cgroup_slurm_job(node, strlen(node), 9));
    /* job_N anywhere but under Slurm's folder is anyone's name */
    const char *mine = "0::/user.slice/user-1000.slice/job_42\n";
    assert_false(cgroup_slurm_job(mine, strlen(mine), 42));
    const char *above = "0::/job_42/slurm\n";
    assert_false(cgroup_slurm_job(above, strlen(above), 42));
    assert_false(cgroup_slurm_job("", 0, 42));
    assert_false(cgroup_slurm_job("garbage without colons", 22, 42));
    /* a line cut short by the buffer is read no further */
    assert_false(cgroup_slurm_job(v2, 30, 7));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(runtimes),
        cmocka_unit_test(garbage_is_not_a_cgroup),
        cmocka_unit_test(slurm_jobs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
