/* The group budget: the cap holds, frees give back, a member that dies
 * (SIGKILL, even holding the lock) loses nothing for the others. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/group.h"

#define MiB (1ULL << 20)

static char path[64];

static int setup(void **st)
{
    (void)st;
    snprintf(path, sizeof path, "/dev/shm/vram-group-test-%d", (int)getpid());
    unlink(path);
    return group_create(path, 100 * MiB, 0, "GPU-test", 0);
}

static int teardown(void **st)
{
    (void)st;
    return unlink(path);
}

static void cap_holds(void **st)
{
    (void)st;
    struct group g;
    assert_int_equal(group_open(&g, path), 0);
    assert_int_equal(group_reserve(&g, 60 * MiB), 0);
    assert_int_equal(group_reserve(&g, 50 * MiB), -1);
    assert_int_equal(group_reserve(&g, 40 * MiB), 0);
    assert_int_equal(group_reserve(&g, 1), -1);
    group_release(&g, 40 * MiB);
    struct group_view v;
    assert_int_equal(group_read(path, &v), 0);
    assert_true(v.used == 60 * MiB && v.peak == 100 * MiB && v.nmembers == 1);
    group_release(&g, 60 * MiB);
    group_close(&g);
}

static void dead_member_gives_back(void **st)
{
    (void)st;
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t child = fork();
    if (child == 0) {
        struct group g;
        if (group_open(&g, path) || group_reserve(&g, 90 * MiB))
            _exit(1);
        /* die holding the lock, mid-update */
        pthread_mutex_lock(&g.sh->lock);
        g.sh->used += 5 * MiB;
        if (write(ready[1], "x", 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    struct group g;
    assert_int_equal(group_open(&g, path), 0);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    /* the lock is recovered and the dead member's 90 MiB come back */
    assert_int_equal(group_reserve(&g, 95 * MiB), 0);
    struct group_view v;
    assert_int_equal(group_read(path, &v), 0);
    assert_true(v.used == 95 * MiB);
    assert_int_equal(v.nmembers, 1);
    group_release(&g, 95 * MiB);
    group_close(&g);
    close(ready[0]);
    close(ready[1]);
}

static void private_budget(void **st)
{
    (void)st;
    struct group g;
    assert_int_equal(group_open_private(&g, 10 * MiB), 0);
    assert_int_equal(group_reserve(&g, 10 * MiB), 0);
    assert_int_equal(group_reserve(&g, 1), -1);
    group_close(&g);
    assert_int_equal(group_open(&g, "/dev/null"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cap_holds),
        cmocka_unit_test(dead_member_gives_back),
        cmocka_unit_test(private_budget),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
