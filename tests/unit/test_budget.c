/* libvramcap's budget per GPU: each device ordinal finds the group of its
 * own GPU, by UUID whatever order the process sees its GPUs in; a device
 * the process was not given finds none (and is told why once); a driver
 * whose names match no file, or that cannot name a device, goes by the
 * order of the lists; VRAM_CAP's sizes make a private budget per device.
 * Against a fake driver: the two entry points budget.c asks. */
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

#include "rundir.h"
#include "shim/budget.h"
#include "shim/driver.h"

#define GiB (1ULL << 30)

/* the fake driver: the GPUs the process sees, by a byte of their UUID */
static int visible[8], nvisible;
static bool nameless;

static CUresult fake_uuid(CUuuid *u, CUdevice dev)
{
    if (nameless || dev < 0 || dev >= nvisible)
        return 101; /* CUDA_ERROR_INVALID_DEVICE */
    memset(u, 0, sizeof *u);
    u->bytes[15] = (char)visible[dev];
    return CUDA_SUCCESS;
}

static CUresult fake_count(int *n)
{
    *n = nvisible;
    return CUDA_SUCCESS;
}

CUresult (*real_cuDeviceGetUuid_v2)(CUuuid *, CUdevice) = fake_uuid;
CUresult (*real_cuDeviceGetCount)(int *) = fake_count;

static void name_of(int id, char *out, size_t len)
{
    snprintf(out, len, "GPU-00000000-0000-0000-0000-0000000000%02x", id);
}


static int setup(void **st)
{
    (void)st;
    return rundir_make("budget");
}

static int teardown(void **st)
{
    (void)st;
    return rundir_remove();
}

/* "A,B": group files for GPUs with these UUID bytes and caps, as vram run
 * makes them (a UUID of 0: none recorded) */
static void make(char *list, size_t len, const int *ids, const uint64_t *caps, int n)
{
    list[0] = '\0';
    for (int i = 0; i < n; i++) {
        char path[GROUP_PATH_MAX], uuid[96] = "";
        if (ids[i])
            name_of(ids[i], uuid, sizeof uuid);
        assert_int_equal(group_create(path, sizeof path, caps[i], (unsigned)i, uuid, 0), 0);
        snprintf(list + strlen(list), len - strlen(list), "%s%s", i ? "," : "", path);
    }
}

static void see(const int *ids, int n)
{
    memcpy(visible, ids, (size_t)n * sizeof *ids);
    nvisible = n;
    nameless = false;
}

/* what the shim never does (its budget lives as long as the process) */
static void drop(struct budget *b)
{
    for (unsigned i = 0; i < BUDGET_MAX_DEVICES; i++)
        if (b->slice[i].sh)
            group_close(&b->slice[i]);
}

static uint64_t cap_of(struct budget *b, int dev)
{
    struct group *g = budget_of(b, dev);
    return g ? g->sh->cap : 0;
}

static void each_device_finds_its_gpu_by_uuid(void **st)
{
    (void)st;
    char list[1024], err[400];
    struct budget b;
    make(list, sizeof list, (int[]){1, 2}, (uint64_t[]){4 * GiB, 2 * GiB}, 2);
    see((int[]){2, 1}, 2); /* the process sees them the other way round */
    assert_int_equal(budget_open_files(&b, list, err, sizeof err), 0);
    assert_true(cap_of(&b, 0) == 2 * GiB);
    assert_true(cap_of(&b, 1) == 4 * GiB);
    /* one budget each: what one takes the other still has */
    assert_int_equal(group_reserve(budget_of(&b, 0), 2 * GiB), 0);
    assert_int_equal(group_reserve(budget_of(&b, 0), 1), -1);
    assert_int_equal(group_reserve(budget_of(&b, 1), 4 * GiB), 0);
    /* and NVML finds each by its UUID */
    char uuid[96];
    name_of(1, uuid, sizeof uuid);
    assert_ptr_equal(budget_by_uuid(&b, uuid), budget_of(&b, 1));
    name_of(9, uuid, sizeof uuid);
    assert_null(budget_by_uuid(&b, uuid));
    drop(&b);
}

static void a_gpu_not_given_has_no_budget(void **st)
{
    (void)st;
    char list[1024], err[400];
    struct budget b;
    make(list, sizeof list, (int[]){1, 2}, (uint64_t[]){4 * GiB, 4 * GiB}, 2);
    see((int[]){1, 2, 3}, 3);
    assert_int_equal(budget_open_files(&b, list, err, sizeof err), 0);
    assert_non_null(budget_of(&b, 0));
    assert_non_null(budget_of(&b, 1));
    assert_null(budget_of(&b, 2));
    assert_null(budget_of(&b, -1));
    assert_null(budget_of(&b, BUDGET_MAX_DEVICES));
    /* said once, however often it is refused */
    fflush(stderr);
    int saved = dup(2);
    FILE *tmp = tmpfile();
    dup2(fileno(tmp), 2);
    budget_refused(&b, 2);
    budget_refused(&b, 2);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char text[1024] = "";
    rewind(tmp);
    size_t got = fread(text, 1, sizeof text - 1, tmp);
    text[got] = '\0';
    fclose(tmp);
    assert_non_null(strstr(text, "CUDA device 2 (GPU-00000000-0000-0000-0000-000000000003) is not "
                                 "one of the 2 GPUs"));
    assert_null(strstr(strstr(text, "CUDA device 2") + 1, "CUDA device 2"));
    drop(&b);
}

static void names_that_match_nothing_go_by_order(void **st)
{
    (void)st;
    char list[1024], err[400];
    struct budget b;
    make(list, sizeof list, (int[]){1, 2}, (uint64_t[]){4 * GiB, 2 * GiB}, 2);
    see((int[]){7, 8}, 2); /* named otherwise (MIG instances) */
    assert_int_equal(budget_open_files(&b, list, err, sizeof err), 0);
    assert_true(cap_of(&b, 0) == 4 * GiB);
    assert_true(cap_of(&b, 1) == 2 * GiB);
    assert_null(budget_of(&b, 2));
    /* a driver that cannot name its devices: the same */
    make(list, sizeof list, (int[]){1, 2}, (uint64_t[]){3 * GiB, 1 * GiB}, 2);
    see((int[]){2, 1}, 2);
    nameless = true;
    drop(&b);
    assert_int_equal(budget_open_files(&b, list, err, sizeof err), 0);
    assert_true(cap_of(&b, 0) == 3 * GiB);
    assert_true(cap_of(&b, 1) == 1 * GiB);
    /* a file that records no GPU: its place in the list */
    make(list, sizeof list, (int[]){0, 2}, (uint64_t[]){5 * GiB, 1 * GiB}, 2);
    see((int[]){1, 2}, 2);
    drop(&b);
    assert_int_equal(budget_open_files(&b, list, err, sizeof err), 0);
    assert_true(cap_of(&b, 0) == 5 * GiB);
    assert_true(cap_of(&b, 1) == 1 * GiB);
    drop(&b);
}

static void bad_lists_are_refused(void **st)
{
    (void)st;
    char list[1024], err[400];
    struct budget b;
    make(list, sizeof list, (int[]){1}, (uint64_t[]){GiB}, 1);
    strcat(list, ",/nonexistent/vram-group");
    assert_int_equal(budget_open_files(&b, list, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/vram-group is not a vram group"));
    assert_int_equal(budget_open_files(&b, ",", err, sizeof err), -1);
    assert_int_equal(budget_open_sizes(&b, "lots", err, sizeof err), -1);
    assert_non_null(strstr(err, "VRAM_CAP='lots'"));
}

static void a_path_with_a_comma_is_one_path(void **st)
{
    (void)st;
    char sub[128], list[1024], err[400];
    snprintf(sub, sizeof sub, "%s/a,b", rundir);
    assert_int_equal(mkdir(sub, 0700), 0);
    setenv("VRAM_RUN_DIR", sub, 1);
    make(list, sizeof list, (int[]){1}, (uint64_t[]){GiB}, 1);
    setenv("VRAM_RUN_DIR", rundir, 1);
    struct budget b;
    see((int[]){1}, 1);
    assert_int_equal(budget_open_files(&b, list, err, sizeof err), 0);
    assert_true(cap_of(&b, 0) == GiB);
    drop(&b);
}

static void sizes_make_a_budget_per_device(void **st)
{
    (void)st;
    char err[400], uuid[96];
    struct budget b;
    see((int[]){4, 5, 6}, 3);
    assert_int_equal(budget_open_sizes(&b, "4G", err, sizeof err), 0);
    assert_true(cap_of(&b, 0) == 4 * GiB);
    assert_true(cap_of(&b, 2) == 4 * GiB);
    assert_ptr_not_equal(budget_of(&b, 0), budget_of(&b, 2));
    assert_int_equal(group_reserve(budget_of(&b, 0), 4 * GiB), 0);
    assert_int_equal(group_reserve(budget_of(&b, 2), 4 * GiB), 0);
    /* NVML finds a device's even before CUDA asked about it */
    name_of(5, uuid, sizeof uuid);
    assert_ptr_equal(budget_by_uuid(&b, uuid), budget_of(&b, 1));
    drop(&b);
    assert_int_equal(budget_open_sizes(&b, "4G,2G", err, sizeof err), 0);
    assert_true(cap_of(&b, 1) == 2 * GiB);
    assert_null(budget_of(&b, 2));
    drop(&b);
    assert_int_equal(budget_open_sizes(&b, "2:1G", err, sizeof err), 0);
    assert_null(budget_of(&b, 0));
    assert_true(cap_of(&b, 2) == GiB);
    drop(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_device_finds_its_gpu_by_uuid),
        cmocka_unit_test(a_gpu_not_given_has_no_budget),
        cmocka_unit_test(names_that_match_nothing_go_by_order),
        cmocka_unit_test(bad_lists_are_refused),
        cmocka_unit_test(a_path_with_a_comma_is_one_path),
        cmocka_unit_test(sizes_make_a_budget_per_device),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
