/* The group budget: the cap holds, frees give back, a member that dies
 * (SIGKILL, even holding the lock, even mid-write) loses nothing for the
 * others; a member that holds the lock forever makes the others give up,
 * not hang, and readers never wait for it; a file is published whole, for
 * every user to read; files that are not group files are refused without
 * blocking; the first context is measured by one member while the others
 * wait, and later ones are charged before they are made. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/group.h"
#include "rundir.h"

#define MiB (1ULL << 20)

static char path[GROUP_PATH_MAX];

static int setup(void **st)
{
    (void)st;
    return rundir_make("group");
}

static int teardown(void **st)
{
    (void)st;
    return rundir_remove();
}

static int each_setup(void **st)
{
    (void)st;
    return group_create(path, sizeof path, 100 * MiB, 0, "GPU-test", 0);
}

static int each_teardown(void **st)
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

static void published_whole_for_everyone(void **st)
{
    (void)st;
    /* a strict umask must not hide the slice from other users */
    mode_t old = umask(077);
    char p2[GROUP_PATH_MAX];
    assert_int_equal(group_create(p2, sizeof p2, 10 * MiB, 1, "GPU-x", 42), 0);
    umask(old);
    struct stat sb;
    assert_int_equal(stat(p2, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0644);
    assert_non_null(strstr(p2, "/" GROUP_PREFIX));
    struct group_view v;
    assert_int_equal(group_read(p2, &v), 0);
    assert_int_equal(v.state, GROUP_PENDING);
    assert_true(v.creator == (int32_t)getpid() && v.creator_alive);
    assert_true(v.owner == (uint32_t)geteuid() && v.gpu_index == 1 && v.cap == 10 * MiB);
    struct group g;
    assert_int_equal(group_open(&g, p2), 0);
    group_set_state(&g, GROUP_ADMITTED);
    group_close(&g);
    assert_int_equal(group_read(p2, &v), 0);
    assert_int_equal(v.state, GROUP_ADMITTED);
    /* nothing else is left in the folder: no half-made file */
    DIR *d = opendir(rundir);
    struct dirent *e;
    int others = 0;
    while ((e = readdir(d)))
        others += e->d_name[0] != '.' && strncmp(e->d_name, GROUP_PREFIX, 11) != 0;
    closedir(d);
    assert_int_equal(others, 0);
    unlink(p2);
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
        /* die holding the lock, mid-update, the sequence count odd */
        pthread_mutex_lock(&g.sh->lock);
        g.sh->seq |= 1;
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
    /* a reader does not wait on a writer stuck inside */
    struct group_view v;
    assert_int_equal(group_read(path, &v), 0);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    /* the lock is recovered and the dead member's 90 MiB come back */
    assert_int_equal(group_reserve(&g, 95 * MiB), 0);
    assert_int_equal(group_read(path, &v), 0);
    assert_true(v.used == 95 * MiB);
    assert_int_equal(v.nmembers, 1);
    assert_int_equal(g.sh->seq & 1, 0);
    group_release(&g, 95 * MiB);
    group_close(&g);
    close(ready[0]);
    close(ready[1]);
}

static void stuck_member_blocks_no_one(void **st)
{
    (void)st;
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t child = fork();
    if (child == 0) {
        struct group g;
        if (group_open(&g, path))
            _exit(1);
        pthread_mutex_lock(&g.sh->lock); /* and keeps it */
        if (write(ready[1], "x", 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    struct group g;
    assert_int_equal(group_open(&g, path), 0);
    assert_int_equal(g.lock_ms, GROUP_LOCK_MS);
    g.lock_ms = 300; /* not to wait the real limit here */
    /* readers never take the lock */
    struct group_view v;
    assert_int_equal(group_read(path, &v), 0);
    /* a member gives up on it: the allocation is refused, not hung */
    assert_int_equal(group_reserve(&g, MiB), -1);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    assert_int_equal(group_reserve(&g, 10 * MiB), 0);
    /* a free that found the lock taken is given back later */
    pid_t holder = fork();
    if (holder == 0) {
        struct group h;
        if (group_open(&h, path))
            _exit(1);
        pthread_mutex_lock(&h.sh->lock);
        if (write(ready[1], "x", 1) != 1)
            _exit(1);
        sleep(10);
        _exit(0);
    }
    assert_int_equal(read(ready[0], &c, 1), 1);
    group_release(&g, 10 * MiB);
    assert_int_equal(g.owed, 10 * MiB);
    kill(holder, SIGKILL);
    waitpid(holder, NULL, 0);
    assert_int_equal(group_reserve(&g, 100 * MiB), 0);
    group_release(&g, 100 * MiB);
    group_close(&g);
    close(ready[0]);
    close(ready[1]);
}

static void not_group_files(void **st)
{
    (void)st;
    struct group_view v;
    struct group g;
    char p[GROUP_PATH_MAX + 32];
    /* a FIFO: refused at once, not opened (an open would wait for a writer) */
    snprintf(p, sizeof p, "%s/vram-group-fifo", rundir);
    assert_int_equal(mkfifo(p, 0644), 0);
    assert_int_equal(group_read(p, &v), -1);
    assert_int_equal(group_open(&g, p), -1);
    unlink(p);
    /* a link to a real group file */
    snprintf(p, sizeof p, "%s/vram-group-link", rundir);
    assert_int_equal(symlink(path, p), 0);
    assert_int_equal(group_read(p, &v), -1);
    assert_int_equal(group_open(&g, p), -1);
    unlink(p);
    /* a group file anyone may write: anyone may have written it */
    assert_int_equal(chmod(path, 0666), 0);
    assert_int_equal(group_read(path, &v), -1);
    assert_int_equal(group_open(&g, path), -1);
    assert_int_equal(chmod(path, 0644), 0);
    /* the wrong size, the wrong format */
    snprintf(p, sizeof p, "%s/vram-group-short", rundir);
    int fd = open(p, O_CREAT | O_WRONLY, 0644);
    assert_true(fd >= 0 && write(fd, "vramcap2", 8) == 8);
    assert_int_equal(group_read(p, &v), -1);
    assert_int_equal(ftruncate(fd, sizeof(struct group_shared)), 0);
    close(fd);
    assert_int_equal(group_read(p, &v), -1);
    unlink(p);
    assert_int_equal(group_open(&g, "/dev/null"), -1);
}

static void another_owners_file(void **st)
{
    (void)st;
    if (geteuid() != 0)
        skip(); /* needs root, to give the file away */
    struct group g;
    assert_int_equal(group_open(&g, path), 0);
    assert_int_equal(group_reserve(&g, 10 * MiB), 0); /* we are a member */
    assert_int_equal(chown(path, 65534, 65534), 0);
    /* a member only joins its own user's (or root's) group */
    struct group other;
    assert_int_equal(group_open(&other, path), -1);
    /* and what the file says is its owner's word only: our process is no
     * member of it, and its creator (us) is not its owner's */
    struct group_view v;
    assert_int_equal(group_read(path, &v), 0);
    assert_int_equal(v.owner, 65534);
    assert_int_equal(v.nmembers, 0);
    assert_false(v.creator_alive);
    assert_int_equal(chown(path, 0, 0), 0);
    group_release(&g, 10 * MiB);
    group_close(&g);
}

static void forged_entries(void **st)
{
    (void)st;
    /* entries for pids that do not exist, with a start of 0 (what a gone
     * pid's start reads as): no member, no live creator */
    struct group g;
    assert_int_equal(group_open(&g, path), 0);
    g.sh->members[5] = (struct group_member){4194300, 0, 0, 50 * MiB, 50 * MiB};
    g.sh->used = 50 * MiB;
    g.sh->creator = 4194301;
    g.sh->creator_start = 0;
    struct group_view v;
    assert_int_equal(group_read(path, &v), 0);
    assert_int_equal(v.nmembers, 0);
    assert_int_equal(v.used, 0);
    assert_false(v.creator_alive);
    /* and the members' own accounting drops it too */
    assert_int_equal(group_reserve(&g, 100 * MiB), 0);
    group_release(&g, 100 * MiB);
    group_close(&g);
}

static void first_context_measured_once(void **st)
{
    (void)st;
    struct group g;
    assert_int_equal(group_open(&g, path), 0);
    uint64_t bytes = 1;
    assert_int_equal(group_ctx_reserve(&g, &bytes), GROUP_CTX_MEASURE);
    int out[2];
    assert_int_equal(pipe(out), 0);
    pid_t child = fork();
    if (child == 0) {
        /* waits for the measurer's figure, then is charged before it makes
         * its own context */
        struct group c;
        uint64_t b = 0;
        if (group_open(&c, path))
            _exit(1);
        int rc = group_ctx_reserve(&c, &b);
        _exit(rc == GROUP_CTX_RESERVED && b == 30 * MiB ? 0 : 2);
    }
    usleep(50 * 1000);
    assert_int_equal(waitpid(child, NULL, WNOHANG), 0); /* still waiting */
    group_ctx_measured(&g, 30 * MiB);
    assert_int_equal(group_reserve(&g, 30 * MiB), 0);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* the child died: its 30 MiB come back; a full group refuses the next
     * context before it exists */
    assert_int_equal(group_reserve(&g, 60 * MiB), 0);
    assert_int_equal(group_ctx_reserve(&g, &bytes), -1);
    group_release(&g, 60 * MiB);
    assert_int_equal(group_ctx_reserve(&g, &bytes), GROUP_CTX_RESERVED);
    assert_int_equal(bytes, 30 * MiB);
    group_release(&g, 60 * MiB);
    group_close(&g);
    close(out[0]);
    close(out[1]);
}

static void dead_measurer_hands_over(void **st)
{
    (void)st;
    pid_t child = fork();
    if (child == 0) {
        struct group c;
        uint64_t b;
        if (group_open(&c, path) || group_ctx_reserve(&c, &b) != GROUP_CTX_MEASURE)
            _exit(1);
        _exit(0); /* dies before measuring */
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct group g;
    uint64_t bytes;
    assert_int_equal(group_open(&g, path), 0);
    assert_int_equal(group_ctx_reserve(&g, &bytes), GROUP_CTX_MEASURE);
    group_ctx_abandon(&g);
    assert_int_equal(group_ctx_reserve(&g, &bytes), GROUP_CTX_MEASURE);
    group_close(&g);
}

static void private_budget(void **st)
{
    (void)st;
    struct group g;
    assert_int_equal(group_open_private(&g, 10 * MiB), 0);
    assert_int_equal(group_reserve(&g, 10 * MiB), 0);
    assert_int_equal(group_reserve(&g, 1), -1);
    group_close(&g);
}

static void unsafe_folders(void **st)
{
    (void)st;
    char err[256];
    assert_int_equal(group_dir_check(err, sizeof err), 0);
    assert_int_equal(chmod(rundir, 0777), 0);
    assert_int_equal(group_dir_check(err, sizeof err), -1);
    assert_non_null(strstr(err, "chmod +t"));
    assert_int_equal(chmod(rundir, 01777), 0);
    assert_int_equal(group_dir_check(err, sizeof err), 0);
    assert_int_equal(chmod(rundir, 0700), 0);
    setenv("VRAM_RUN_DIR", "/nonexistent/vram", 1);
    assert_int_equal(group_dir_check(err, sizeof err), -1);
    assert_non_null(strstr(err, "VRAM_RUN_DIR"));
    setenv("VRAM_RUN_DIR", rundir, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(cap_holds, each_setup, each_teardown),
        cmocka_unit_test_setup_teardown(published_whole_for_everyone, each_setup, each_teardown),
        cmocka_unit_test_setup_teardown(dead_member_gives_back, each_setup, each_teardown),
        cmocka_unit_test_setup_teardown(stuck_member_blocks_no_one, each_setup, each_teardown),
        cmocka_unit_test_setup_teardown(not_group_files, each_setup, each_teardown),
        cmocka_unit_test_setup_teardown(another_owners_file, each_setup, each_teardown),
        cmocka_unit_test_setup_teardown(forged_entries, each_setup, each_teardown),
        cmocka_unit_test_setup_teardown(first_context_measured_once, each_setup, each_teardown),
        cmocka_unit_test_setup_teardown(dead_measurer_hands_over, each_setup, each_teardown),
        cmocka_unit_test(private_budget),
        cmocka_unit_test(unsafe_folders),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
