/* Every user's slices as any user sees them: real group files are listed,
 * whoever owns them; what is not one (a FIFO, a link, a file others may
 * write) is skipped without blocking; a promise counts only while its `vram
 * run` lives, for the GPU it names, and no more than that GPU holds; one
 * user's flood of files is read only so far; dead slices of this user are
 * cleaned, other users' are left alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/slices.h"
#include "rundir.h"

#define GiB (1ULL << 30)


static int setup(void **st)
{
    (void)st;
    return rundir_make("slices");
}

static int teardown(void **st)
{
    (void)st;
    return rundir_remove();
}

static void empty(void)
{
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'/* '%s'/.vram-* 2>/dev/null", rundir, rundir);
    assert_int_equal(system(cmd), 0);
}

struct seen {
    int n;
    uint64_t unused;
    char names[8][GROUP_PATH_MAX];
};

static int collect(const struct slice *s, void *arg)
{
    struct seen *w = arg;
    if (w->n < 8)
        snprintf(w->names[w->n], GROUP_PATH_MAX, "%s", s->name);
    w->n++;
    if (slices_promises(s, 0, "GPU-a", 16 * GiB))
        w->unused += slices_unused(s);
    return 0;
}

/* A group file made by a child that exits: its `vram run` is dead. */
static void dead_slice(char *path, size_t len, uint64_t cap)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t c = fork();
    if (c == 0) {
        char p[GROUP_PATH_MAX];
        if (group_create(p, sizeof p, cap, 0, "GPU-a", 0) < 0)
            _exit(1);
        ssize_t w = write(fds[1], p, strlen(p) + 1);
        _exit(w > 0 ? 0 : 1);
    }
    int status;
    waitpid(c, &status, 0);
    assert_true(read(fds[0], path, len) > 0);
    close(fds[0]);
    close(fds[1]);
}

static void real_and_forged(void **st)
{
    (void)st;
    empty();
    char live[GROUP_PATH_MAX], p[GROUP_PATH_MAX + 32];
    assert_int_equal(group_create(live, sizeof live, 6 * GiB, 0, "GPU-a", 0), 0);
    /* a FIFO, a link, a group file anyone may write: skipped, and quickly */
    snprintf(p, sizeof p, "%s/vram-group-fifo", rundir);
    assert_int_equal(mkfifo(p, 0666), 0);
    snprintf(p, sizeof p, "%s/vram-group-link", rundir);
    assert_int_equal(symlink(live, p), 0);
    char open_to_all[GROUP_PATH_MAX];
    assert_int_equal(group_create(open_to_all, sizeof open_to_all, 15 * GiB, 0, "GPU-a", 0), 0);
    assert_int_equal(chmod(open_to_all, 0666), 0);
    struct seen w = {0};
    assert_int_equal(slices_each(false, collect, &w), 0);
    assert_int_equal(w.n, 1);
    assert_non_null(strstr(live, w.names[0]));
    assert_int_equal(w.unused, 6 * GiB);
}

static void what_a_promise_is(void **st)
{
    (void)st;
    empty();
    char p[GROUP_PATH_MAX];
    /* for another GPU, or with another UUID at this index: not here */
    assert_int_equal(group_create(p, sizeof p, 2 * GiB, 1, "GPU-a", 0), 0);
    assert_int_equal(group_create(p, sizeof p, 2 * GiB, 0, "GPU-b", 0), 0);
    /* more than the GPU holds: not a slice vram made */
    assert_int_equal(group_create(p, sizeof p, 17 * GiB, 0, "GPU-a", 0), 0);
    /* no cap: counts but promises nothing */
    assert_int_equal(group_create(p, sizeof p, UINT64_MAX, 0, "GPU-a", 0), 0);
    /* its vram run died */
    char dead[GROUP_PATH_MAX];
    dead_slice(dead, sizeof dead, 3 * GiB);
    /* a real one, partly used */
    assert_int_equal(group_create(p, sizeof p, 4 * GiB, 0, "GPU-a", 0), 0);
    struct group g;
    assert_int_equal(group_open(&g, p), 0);
    assert_int_equal(group_reserve(&g, GiB), 0);
    struct seen w = {0};
    assert_int_equal(slices_each(false, collect, &w), 0);
    assert_int_equal(w.n, 6);
    assert_int_equal(w.unused, 3 * GiB);
    group_release(&g, GiB);
    group_close(&g);
    /* with clean, this user's dead slice goes */
    assert_int_equal(access(dead, F_OK), 0);
    memset(&w, 0, sizeof w);
    slices_each(true, collect, &w);
    assert_int_equal(w.n, 5);
    assert_int_equal(access(dead, F_OK), -1);
}

static void others_dead_slices_stay(void **st)
{
    (void)st;
    if (geteuid() != 0)
        skip(); /* needs root, to give the file away */
    empty();
    char dead[GROUP_PATH_MAX];
    dead_slice(dead, sizeof dead, 3 * GiB);
    assert_int_equal(chown(dead, 65534, 65534), 0);
    struct seen w = {0};
    slices_each(true, collect, &w);
    assert_int_equal(w.n, 1);
    assert_int_equal(w.unused, 0);
    assert_int_equal(access(dead, F_OK), 0);
}

static void a_flood_is_read_so_far(void **st)
{
    (void)st;
    empty();
    char p[GROUP_PATH_MAX];
    for (int i = 0; i < SLICES_PER_USER + 20; i++)
        assert_int_equal(group_create(p, sizeof p, GiB / 16, 0, "GPU-a", 0), 0);
    struct seen w = {0};
    slices_each(false, collect, &w);
    assert_int_equal(w.n, SLICES_PER_USER);
    empty();
}

static void no_folder(void **st)
{
    (void)st;
    setenv("VRAM_RUN_DIR", "/nonexistent/vram", 1);
    struct seen w = {0};
    assert_int_equal(slices_each(false, collect, &w), -1);
    setenv("VRAM_RUN_DIR", rundir, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(real_and_forged),
        cmocka_unit_test(what_a_promise_is),
        cmocka_unit_test(others_dead_slices_stay),
        cmocka_unit_test(a_flood_is_read_so_far),
        cmocka_unit_test(no_folder),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
