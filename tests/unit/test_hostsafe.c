/* What host/ does for safety on a shared machine: paths resolved beneath a
 * folder with no link followed (what vram headless --root writes
 * through), and a process held by pidref: gone is gone even if its pid
 * comes back, and another user's is refused as kill would refuse it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/beneath.h"
#include "host/pidref.h"

static char dir[64];

/* Runs a shell line in dir (the tree is made the way a user would). */
static void sh(const char *line)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s", dir, line);
    assert_int_equal(system(cmd), 0);
}

/* Without BENEATH_LINKS no link is followed, inside or out, at any step;
 * with it, only links that stay inside. */
static void no_links(void **st)
{
    (void)st;
    snprintf(dir, sizeof dir, "/tmp/vram-hostsafe-XXXXXX");
    assert_non_null(mkdtemp(dir));
    sh("mkdir -p etc/real out && echo x >etc/real/f && ln -s real etc/inner");
    sh("ln -s ../out etc/up && ln -s \"$PWD/out\" etc/abs && mkfifo etc/fifo");
    int root = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(root >= 0);
    mode_t kind;
    int fd = beneath_open(root, "etc/real/f", 0, &kind);
    assert_true(fd >= 0);
    close(fd);
    fd = beneath_open(root, "etc/real", BENEATH_DIR, &kind);
    assert_true(fd >= 0);
    close(fd);
    fd = beneath_open(root, "", BENEATH_DIR, &kind); /* the root itself */
    assert_true(fd >= 0);
    close(fd);
    /* a link on the way, or at the end: refused, even one that stays inside */
    assert_int_equal(beneath_open(root, "etc/inner/f", 0, &kind), -1);
    assert_int_equal(errno, ELOOP);
    assert_int_equal(kind, S_IFLNK);
    assert_int_equal(beneath_open(root, "etc/inner", BENEATH_DIR, &kind), -1);
    assert_int_equal(errno, ELOOP);
    assert_int_equal(beneath_open(root, "etc/up", BENEATH_DIR, &kind), -1);
    assert_int_equal(errno, ELOOP);
    /* followed when asked, and only while inside */
    fd = beneath_open(root, "etc/inner/f", BENEATH_LINKS, &kind);
    assert_true(fd >= 0);
    close(fd);
    fd = beneath_open(root, "etc/up", BENEATH_DIR | BENEATH_LINKS, &kind);
    assert_true(fd >= 0); /* ../out is still beneath the root */
    close(fd);
    assert_int_equal(beneath_open(root, "etc/abs", BENEATH_DIR | BENEATH_LINKS, &kind), -1);
    assert_int_equal(errno, EXDEV);
    assert_int_equal(beneath_open(root, "../x", BENEATH_LINKS, &kind), -1);
    assert_int_equal(errno, EXDEV);
    /* a FIFO is never opened: opening one would wait for a writer */
    assert_int_equal(beneath_open(root, "etc/fifo", 0, &kind), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(kind, S_IFIFO);
    close(root);
    sh("rm -rf \"$PWD\"");
}

/* A process that exited is not the same, whatever its pid is now. */
static void pidref_gone(void **st)
{
    (void)st;
    char err[256];
    pid_t c = fork();
    if (c == 0) {
        pause();
        _exit(0);
    }
    struct pidref r;
    assert_int_equal(pidref_open(&r, c, err, sizeof err), 0);
    assert_true(pidref_same(&r));
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
    assert_false(pidref_same(&r));
    pidref_close(&r);
    assert_int_equal(pidref_open(&r, c, err, sizeof err), -1);
    assert_non_null(strstr(err, "no process"));
}

/* Another user's process is refused with its owner named; root may. */
static void pidref_owner(void **st)
{
    (void)st;
    if (geteuid() != 0)
        skip(); /* needs a second user */
    char err[256];
    struct pidref r;
    assert_int_equal(pidref_open(&r, getpid(), err, sizeof err), 0);
    pidref_close(&r);
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t c = fork();
    if (c == 0) {
        close(p[0]);
        if (setgid(65534) || setuid(65534))
            _exit(2);
        /* the parent is root's: a non-root user may not signal it */
        int rc = pidref_open(&r, getppid(), err, sizeof err);
        if (write(p[1], err, strlen(err) + 1) < 0)
            _exit(3);
        _exit(rc == -1 ? 0 : 1);
    }
    close(p[1]);
    char got[256] = "";
    assert_true(read(p[0], got, sizeof got - 1) > 0);
    close(p[0]);
    int status;
    waitpid(c, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_non_null(strstr(got, "is another user's (uid 0)"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_links),
        cmocka_unit_test(pidref_gone),
        cmocka_unit_test(pidref_owner),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
