/* doctor on Windows: the seed's desktop (1.6 GB held by dwm.exe and the
 * shell on a 16 GB card), a finished training's python.exe, and every fix
 * naming what exists on Windows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "core/doctor_win.h"

#define GiB (1ULL << 30)
#define MiB (1ULL << 20)

static struct snap_proc proc(uint32_t pid, const char *name, enum snap_role role, uint64_t used)
{
    struct snap_proc p;
    memset(&p, 0, sizeof p);
    p.pid = pid;
    p.role = role;
    p.used = used;
    p.used_known = true;
    p.types = SNAP_PT_COMPUTE | SNAP_PT_GRAPHICS;
    snprintf(p.name, sizeof p.name, "%s", name);
    return p;
}

static struct snap_proc procs[4];

/* the seed's card: idle, the monitor on it, python.exe left over */
static struct snap_gpu desktop(bool with_python)
{
    procs[0] = proc(4184, "dwm.exe", SNAP_ROLE_DISPLAY, 1100 * MiB);
    procs[1] = proc(5812, "explorer.exe", SNAP_ROLE_DISPLAY, 500 * MiB);
    procs[2] = proc(9000, "python.exe", SNAP_ROLE_WORKLOAD, 3 * GiB);
    struct snap_gpu g;
    memset(&g, 0, sizeof g);
    g.have = SNAP_HAVE_MEMORY | SNAP_HAVE_PROCS | SNAP_HAVE_UTIL | SNAP_HAVE_DISPLAY |
             SNAP_HAVE_PERSISTENCE;
    uint64_t used = 1600 * MiB + (with_python ? 3 * GiB : 0);
    g.mem = (struct snap_mem){16 * GiB, 460 * MiB, used, 16 * GiB - 460 * MiB - used, 2};
    g.display_active = g.display_attached = true;
    g.persistence = false; /* a Linux setting: no finding on Windows */
    g.procs = procs;
    g.nprocs = with_python ? 3 : 2;
    return g;
}

static size_t examine(struct snap_gpu *g, const struct doc_win *w, double idle,
                      struct doc_finding *f)
{
    struct snap s = {.gpus = g, .ngpus = 1};
    struct doc_host h = {.idle_s = idle, .now_ms = 1000};
    return doctor_win_examine(&s, &h, w, f, 32);
}

static const struct doc_finding *find(const struct doc_finding *f, size_t n, enum doc_kind k)
{
    for (size_t i = 0; i < n; i++)
        if (f[i].kind == k)
            return &f[i];
    return NULL;
}

/* strstr, out of the compiler's sight: it cannot prove find() non-NULL */
__attribute__((noinline)) static bool says(const char *text, const char *needle)
{
    return strstr(text, needle) != NULL;
}

/* No fix may name a Linux command. */
static void windows_commands_only(const struct doc_finding *f, size_t n)
{
    const char *linux_only[] = {"reclaim", "kill -", "sudo", "nvidia-persistenced", "/proc",
                                "root", "mps-control", NULL};
    for (size_t i = 0; i < n; i++)
        for (int k = 0; linux_only[k]; k++)
            if (strstr(f[i].fix, linux_only[k]) || strstr(f[i].what, linux_only[k]))
                fail_msg("finding %zu names %s: %s / %s", i, linux_only[k], f[i].what, f[i].fix);
}

static void the_seed_desktop(void **st)
{
    (void)st;
    struct snap_gpu g = desktop(false);
    struct doc_win w = {.hwsch = 1, .hwsch_known = true, .igpu = true};
    snprintf(w.igpu_name, sizeof w.igpu_name, "the Intel adapter");
    struct doc_finding f[32];
    size_t n = examine(&g, &w, 0, f);
    const struct doc_finding *d = find(f, n, DOC_DISPLAY);
    assert_non_null(d);
    assert_int_equal(d->bytes, 1600 * MiB);
    assert_true(says(d->what, "dwm.exe, explorer.exe"));
    assert_true(says(d->fix, "vram headless on"));
    assert_true(says(d->fix, "1.56 GiB")); /* what it gives back */
    const struct doc_finding *s = find(f, n, DOC_GPU_SCHEDULING);
    assert_non_null(s);
    assert_true(says(s->what, "off (HwSchMode 1)"));
    assert_true(says(s->fix, "HwSchMode = 2"));
    assert_non_null(find(f, n, DOC_RESERVED));
    assert_null(find(f, n, DOC_PERSISTENCE));
    assert_null(find(f, n, DOC_IDLE));
    windows_commands_only(f, n);
}

static void scheduling_on_or_switched_says_nothing(void **st)
{
    (void)st;
    struct snap_gpu g = desktop(false);
    struct doc_finding f[32];
    struct doc_win on = {.hwsch = 2, .hwsch_known = true};
    assert_null(find(f, examine(&g, &on, 0, f), DOC_GPU_SCHEDULING));
    struct doc_win applied = {.hwsch = 1, .hwsch_known = true, .headless_on = true};
    assert_null(find(f, examine(&g, &applied, 0, f), DOC_GPU_SCHEDULING));
    struct doc_win unset = {.hwsch = -1, .hwsch_known = true};
    const struct doc_finding *s = find(f, examine(&g, &unset, 0, f), DOC_GPU_SCHEDULING);
    assert_non_null(s);
    assert_true(says(s->what, "not set"));
}

static void a_training_leftover(void **st)
{
    (void)st;
    struct snap_gpu g = desktop(true);
    struct doc_win w = {.hwsch = 2, .hwsch_known = true};
    struct doc_finding f[32];
    size_t n = examine(&g, &w, 0, f);
    const struct doc_finding *l = find(f, n, DOC_IDLE);
    assert_non_null(l);
    assert_int_equal(l->level, DOC_WARN);
    assert_int_equal(l->pid, 9000);
    assert_int_equal(l->bytes, 3 * GiB);
    assert_true(says(l->what, "python.exe"));
    assert_true(says(l->fix, "taskkill /PID 9000"));
    windows_commands_only(f, n);
    /* busy: the same process is working, not left over */
    g.util_gpu = 85;
    assert_null(find(f, examine(&g, &w, 0, f), DOC_IDLE));
}

static void no_other_adapter(void **st)
{
    (void)st;
    struct snap_gpu g = desktop(false);
    struct doc_win w = {.hwsch = 2, .hwsch_known = true};
    struct doc_finding f[32];
    size_t n = examine(&g, &w, 0, f);
    const struct doc_finding *d = find(f, n, DOC_DISPLAY);
    assert_non_null(d);
    assert_true(says(d->fix, "no other display adapter"));
    windows_commands_only(f, n);
}

/* WDDM hid the figures and no counter gave them: say where to look. */
static void hidden_figures(void **st)
{
    (void)st;
    struct snap_gpu g = desktop(false);
    procs[0].used_known = procs[1].used_known = false;
    struct doc_win w = {.hwsch = 2, .hwsch_known = true};
    struct doc_finding f[32];
    size_t n = examine(&g, &w, 0, f);
    assert_null(find(f, n, DOC_DISPLAY));
    const struct doc_finding *u = find(f, n, DOC_UNATTRIBUTED);
    assert_non_null(u);
    assert_true(says(u->fix, "Task Manager"));
    windows_commands_only(f, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_seed_desktop),
        cmocka_unit_test(scheduling_on_or_switched_says_nothing),
        cmocka_unit_test(a_training_leftover),
        cmocka_unit_test(no_other_adapter),
        cmocka_unit_test(hidden_figures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
