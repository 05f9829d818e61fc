/* The daemon's host memory for fast swap: chunks given to one model are
 * never another's (separate memfds, not views of one); a spare is
 * populated in the background up to what is asked and no further; what a
 * model keeps stays, the rest comes back; what comes back is freed even
 * while a model still maps it (its bytes are gone, not handed on); the
 * pool refuses rather than pass its limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/hostpool.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

/* Waits (up to 20 s) until the pool's spare and frees reach what is asked:
 * the pool's threads do it in their own time. */
static void settle(struct hostpool *p, uint64_t spare)
{
    struct hostpool_stats s;
    for (int i = 0; i < 20000; i++) {
        hostpool_stats(p, &s);
        if (s.spare == spare && !s.filling && !s.freeing)
            return;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    fail_msg("spare %llu, filling %llu, freeing %llu; wanted a spare of %llu",
             (unsigned long long)s.spare, (unsigned long long)s.filling,
             (unsigned long long)s.freeing, (unsigned long long)spare);
}

static void spare_then_given(void **state)
{
    (void)state;
    char err[160];
    struct hostpool *p = hostpool_open(4 * GiB, 1 * GiB, err, sizeof err);
    assert_non_null(p);
    struct hostpool_stats s;
    hostpool_stats(p, &s);
    uint64_t c = s.chunk;
    assert_true(c == HOSTPOOL_MIN_CHUNK); /* a share of 1 GiB in at most 48 */
    assert_true(s.spare == 0 && s.given == 0); /* nothing taken before asked */
    hostpool_set_spare(p, 512 * MiB);
    settle(p, 512 * MiB);
    int fds[64];
    unsigned n;
    assert_int_equal(hostpool_give(p, 3, 600 * MiB, fds, 64, &n, err, sizeof err), 0);
    /* the spare's chunks, then new ones for the rest */
    assert_int_equal(n, (600 * MiB + c - 1) / c);
    assert_true(hostpool_given(p, 3) == n * c);
    for (unsigned i = 0; i < n; i++) {
        struct stat st;
        assert_int_equal(fstat(fds[i], &st), 0);
        assert_true((uint64_t)st.st_size == c);
    }
    /* what was taken is not made again until asked (the daemon's plan
     * asks after every move): no spare is made meanwhile */
    hostpool_stats(p, &s);
    assert_true(s.spare == 0 && s.filling == 0);
    hostpool_set_spare(p, 512 * MiB);
    settle(p, 512 * MiB); /* the spare is made again */
    hostpool_keep(p, 3, 300 * MiB); /* it used the first 300 MiB */
    assert_true(hostpool_given(p, 3) == (300 * MiB + c - 1) / c * c);
    /* more than one request carries: what it can carry, the model makes up the rest */
    assert_int_equal(hostpool_give(p, 4, 3 * GiB, fds, 8, &n, err, sizeof err), 0);
    assert_int_equal(n, 8);
    hostpool_release(p, 4);
    hostpool_release(p, 3);
    assert_true(hostpool_given(p, 3) == 0);
    hostpool_set_spare(p, 512 * MiB);
    settle(p, 512 * MiB);
    hostpool_set_spare(p, 0); /* the spare goes back when not wanted */
    settle(p, 0);
    hostpool_close(p);
}

static void models_never_share(void **state)
{
    (void)state;
    char err[160];
    struct hostpool *p = hostpool_open(4 * GiB, 1 * GiB, err, sizeof err);
    assert_non_null(p);
    hostpool_set_spare(p, 512 * MiB);
    settle(p, 512 * MiB);
    int a[64], b[64];
    unsigned na, nb;
    assert_int_equal(hostpool_give(p, 1, 512 * MiB, a, 64, &na, err, sizeof err), 0);
    /* model 1 writes its bytes, and keeps its mapping after giving them back */
    char *m = mmap(NULL, HOSTPOOL_MIN_CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED, a[0], 0);
    assert_true(m != MAP_FAILED);
    memset(m, 0x5A, 1 * MiB);
    struct stat sa[64];
    for (unsigned i = 0; i < na; i++)
        assert_int_equal(fstat(a[i], &sa[i]), 0);
    hostpool_release(p, 1);
    hostpool_set_spare(p, 512 * MiB); /* as the daemon's plan asks after a move */
    settle(p, 512 * MiB);
    assert_int_equal(hostpool_give(p, 2, 512 * MiB, b, 64, &nb, err, sizeof err), 0);
    for (unsigned i = 0; i < nb; i++) {
        struct stat st;
        assert_int_equal(fstat(b[i], &st), 0);
        for (unsigned k = 0; k < na; k++)
            assert_false(st.st_ino == sa[k].st_ino); /* never a chunk model 1 held */
    }
    /* model 1's bytes were freed, though it still maps them: zeros now */
    for (size_t o = 0; o < 1 * MiB; o += 4096)
        assert_int_equal(m[o], 0);
    munmap(m, HOSTPOOL_MIN_CHUNK);
    hostpool_close(p);
}

static void limit_refuses(void **state)
{
    (void)state;
    char err[160];
    struct hostpool *p = hostpool_open(1 * GiB, 1 * GiB, err, sizeof err);
    assert_non_null(p);
    int fds[64];
    unsigned n;
    assert_int_equal(hostpool_give(p, 0, 768 * MiB, fds, 64, &n, err, sizeof err), 0);
    assert_int_equal(hostpool_give(p, 1, 512 * MiB, fds, 64, &n, err, sizeof err), -1);
    assert_int_equal(n, 0);
    assert_non_null(strstr(err, "limit"));
    assert_true(hostpool_given(p, 1) == 0);
    /* and the spare never takes what models hold past the limit */
    hostpool_set_spare(p, 1 * GiB);
    settle(p, 256 * MiB);
    assert_true(hostpool_given(p, 0) == 768 * MiB);
    hostpool_release(p, 0);
    settle(p, 1 * GiB);
    hostpool_close(p);
}

/* The disk tier's side of the pool: a give of some takes what the limit
 * has room for (the rest goes to disk), and memory the driver's checkpoint
 * holds counts against the same limit (before, it was outside it: three
 * models on a 600M budget held 1.67 GiB). */
static void some_and_charged(void **state)
{
    (void)state;
    char err[200];
    struct hostpool *p = hostpool_open(1 * GiB, 1 * GiB, err, sizeof err);
    assert_non_null(p);
    int fds[64];
    unsigned n;
    assert_int_equal(hostpool_give(p, 0, 768 * MiB, fds, 64, &n, err, sizeof err), 0);
    assert_int_equal(hostpool_give_some(p, 1, 768 * MiB, fds, 64, &n, err, sizeof err), 0);
    assert_true(hostpool_given(p, 1) > 0 && hostpool_given(p, 1) <= 256 * MiB);
    assert_true(hostpool_given(p, 0) + hostpool_given(p, 1) <= 1 * GiB);
    /* no room left: a checkpoint's charge is refused, unless it is held already */
    assert_int_equal(hostpool_charge(p, 2, 512 * MiB, false, err, sizeof err), -1);
    assert_non_null(strstr(err, "host_budget"));
    assert_true(hostpool_charged(p, 2) == 0);
    hostpool_release(p, 0);
    settle(p, 0);
    assert_int_equal(hostpool_charge(p, 2, 512 * MiB, false, err, sizeof err), 0);
    assert_true(hostpool_charged(p, 2) == 512 * MiB);
    /* a charge leaves less to give */
    assert_int_equal(hostpool_give(p, 3, 512 * MiB, fds, 64, &n, err, sizeof err), -1);
    hostpool_release(p, 2);
    assert_true(hostpool_charged(p, 2) == 0);
    assert_int_equal(hostpool_give(p, 3, 512 * MiB, fds, 64, &n, err, sizeof err), 0);
    hostpool_close(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spare_then_given),
        cmocka_unit_test(models_never_share),
        cmocka_unit_test(limit_refuses),
        cmocka_unit_test(some_and_charged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
