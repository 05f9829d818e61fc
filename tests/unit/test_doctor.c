/* doctor's rules on hand-made snapshots: each finding when it should, and
 * not when it should not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "core/doctor.h"

#define GiB (1ULL << 30)
#define MiB (1ULL << 20)

static struct snap_gpu gpu(uint64_t total, uint64_t reserved, uint64_t used)
{
    struct snap_gpu g;
    memset(&g, 0, sizeof g);
    g.have = SNAP_HAVE_MEMORY | SNAP_HAVE_PROCS;
    g.mem = (struct snap_mem){total, reserved, used, total - reserved - used, 2};
    return g;
}

static size_t examine(struct snap_gpu *g, const struct doc_host *h, struct doc_finding *f)
{
    struct snap s;
    memset(&s, 0, sizeof s);
    s.gpus = g;
    s.ngpus = 1;
    return doctor_examine(&s, h, f, 32);
}

static const struct doc_finding *find(const struct doc_finding *f, size_t n, enum doc_kind k)
{
    for (size_t i = 0; i < n; i++)
        if (f[i].kind == k)
            return &f[i];
    return NULL;
}

static void clean_card_has_nothing_to_do(void **st)
{
    (void)st;
    struct snap_gpu g = gpu(16 * GiB, 0, 100 * MiB); /* 100 MiB unattributed: normal */
    struct doc_finding f[32];
    struct doc_host h = {0};
    size_t n = examine(&g, &h, f);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(f[i].level, DOC_INFO);
}

static void desktop_and_the_igpu(void **st)
{
    (void)st;
    struct snap_proc p[1];
    memset(p, 0, sizeof p);
    p[0] =
        (struct snap_proc){.pid = 10, .role = SNAP_ROLE_DISPLAY, .used = GiB, .used_known = true};
    snprintf(p[0].name, sizeof p[0].name, "Xorg");
    struct snap_gpu g = gpu(16 * GiB, 0, GiB);
    g.procs = p;
    g.nprocs = 1;
    struct doc_finding f[32];
    struct doc_host h = {.igpu = true};
    snprintf(h.igpu_name, sizeof h.igpu_name, "the Intel GPU (card0)");
    size_t n = examine(&g, &h, f);
    const struct doc_finding *d = find(f, n, DOC_DISPLAY);
    assert_non_null(d);
    assert_true(d->bytes == GiB);
    assert_non_null(strstr(d->what, "Xorg"));
    assert_non_null(strstr(d->fix, "vram headless on"));
    h.igpu = false;
    n = examine(&g, &h, f);
    assert_null(strstr(find(f, n, DOC_DISPLAY)->fix, "headless"));
}

static void idle_power_and_unattributed(void **st)
{
    (void)st;
    struct snap_gpu g = gpu(80 * GiB, 0, GiB);
    g.have |= SNAP_HAVE_POWER | SNAP_HAVE_POWER_LIMIT | SNAP_HAVE_UTIL;
    g.power_mw = 250000;
    g.power_limit_mw = 700000;
    struct doc_finding f[32];
    struct doc_host h = {.mps_pid = 77};
    size_t n = examine(&g, &h, f);
    assert_non_null(find(f, n, DOC_IDLE_POWER));
    assert_non_null(find(f, n, DOC_UNATTRIBUTED)); /* 1 GiB held by nobody visible */
    assert_non_null(find(f, n, DOC_MPS));
    g.util_gpu = 40; /* busy: high power is expected */
    n = examine(&g, &h, f);
    assert_null(find(f, n, DOC_IDLE_POWER));
}

/* Idle means: old enough, and not seen working within the watched time;
 * without per-process samples nothing is called idle. */
static void idle_needs_age_and_no_recent_work(void **st)
{
    (void)st;
    const uint64_t now_ms = 1000000000ULL * 1000; /* some wall-clock time */
    struct snap_proc p[4];
    memset(p, 0, sizeof p);
    for (int i = 0; i < 4; i++) {
        p[i] = (struct snap_proc){.pid = 100 + (uint32_t)i,
                                  .role = SNAP_ROLE_WORKLOAD,
                                  .used = GiB,
                                  .used_known = true,
                                  .host_known = true,
                                  .state = SNAP_PS_SLEEPING,
                                  .start_time = now_ms / 1000 - 3600};
        snprintf(p[i].name, sizeof p[i].name, "job%d", i);
    }
    p[1].busy_us = (now_ms - 5 * 1000) * 1000;       /* worked 5 s ago */
    p[2].start_time = now_ms / 1000 - 30;            /* started 30 s ago */
    p[3].busy_us = (now_ms - 20 * 60 * 1000) * 1000; /* worked 20 min ago */
    struct snap_gpu g = gpu(16 * GiB, 0, 4 * GiB);
    g.have |= SNAP_HAVE_ACTIVITY;
    g.procs = p;
    g.nprocs = 4;
    struct doc_host h = {.idle_s = 600, .now_ms = now_ms};
    struct doc_finding f[32];
    size_t n = examine(&g, &h, f);
    unsigned idle = 0;
    for (size_t i = 0; i < n; i++)
        if (f[i].kind == DOC_IDLE)
            idle |= 1u << (f[i].pid - 100);
    assert_int_equal(idle, 1u << 0 | 1u << 3);
    const struct doc_finding *d = find(f, n, DOC_IDLE);
    assert_true(d && strstr(d->what, "did no GPU work for 10m"));
    assert_int_equal(d->bytes, GiB);

    g.have &= ~(unsigned)SNAP_HAVE_ACTIVITY; /* the driver keeps no samples */
    n = examine(&g, &h, f);
    assert_null(find(f, n, DOC_IDLE));
}

/* A model of vram serve is the daemon's: idle, it is information (the
 * daemon gives it back after its keep_alive), stopped, a warning; both
 * point at vram unload NAME, never at vram reclaim. */
static void models_of_vram_serve_go_to_vram_unload(void **st)
{
    (void)st;
    const uint64_t now_ms = 1000000000ULL * 1000;
    struct snap_proc p[3];
    memset(p, 0, sizeof p);
    for (int i = 0; i < 3; i++) {
        p[i] = (struct snap_proc){.pid = 200 + (uint32_t)i,
                                  .role = SNAP_ROLE_WORKLOAD,
                                  .used = GiB,
                                  .used_known = true,
                                  .host_known = true,
                                  .state = SNAP_PS_SLEEPING,
                                  .start_time = now_ms / 1000 - 3600};
        snprintf(p[i].name, sizeof p[i].name, "llama-server");
    }
    snprintf(p[0].model, sizeof p[0].model, "qwen-7b");
    snprintf(p[1].model, sizeof p[1].model, "embedder");
    p[1].state = SNAP_PS_STOPPED;
    struct snap_gpu g = gpu(16 * GiB, 0, 3 * GiB);
    g.have |= SNAP_HAVE_ACTIVITY;
    g.procs = p;
    g.nprocs = 3;
    struct doc_host h = {.idle_s = 600, .now_ms = now_ms};
    struct doc_finding f[32];
    size_t n = examine(&g, &h, f);
    const struct doc_finding *idle = NULL, *other = NULL;
    for (size_t i = 0; i < n; i++) {
        if (f[i].kind == DOC_IDLE && f[i].pid == 200)
            idle = &f[i];
        if (f[i].kind == DOC_IDLE && f[i].pid == 202)
            other = &f[i];
    }
    assert_true(idle && idle->level == DOC_INFO);
    assert_true(strstr(idle->what, "model qwen-7b of vram serve (pid 200)"));
    assert_true(strstr(idle->fix, "vram unload qwen-7b") && !strstr(idle->fix, "reclaim --idle"));
    assert_true(other && other->level == DOC_WARN && strstr(other->fix, "vram reclaim --idle"));
    const struct doc_finding *stopped = find(f, n, DOC_STOPPED);
    assert_true(stopped && stopped->level == DOC_WARN);
    assert_true(strstr(stopped->what, "model embedder of vram serve (pid 201) is stopped"));
    assert_true(strstr(stopped->fix, "vram unload embedder"));
    assert_null(strstr(stopped->fix, "vram reclaim --yes"));
}

/* The card's settings: each reported once, as information, with its fix;
 * the driver's reserve as information too. */
static void card_settings(void **st)
{
    (void)st;
    struct snap_gpu g = gpu(16 * GiB, 600 * MiB, 0);
    g.have |= SNAP_HAVE_PERSISTENCE | SNAP_HAVE_COMPUTE_MODE | SNAP_HAVE_MIG;
    g.persistence = false;
    g.compute_mode = 2;
    g.mig = true;
    struct doc_host h = {0};
    struct doc_finding f[32];
    size_t n = examine(&g, &h, f);
    const struct doc_finding *r = find(f, n, DOC_RESERVED);
    assert_non_null(r);
    assert_int_equal(r->bytes, 600 * MiB);
    const struct doc_finding *p = find(f, n, DOC_PERSISTENCE);
    assert_true(p && strstr(p->fix, "nvidia-persistenced"));
    const struct doc_finding *c = find(f, n, DOC_COMPUTE_MODE);
    assert_true(c && strstr(c->what, "prohibited"));
    assert_non_null(find(f, n, DOC_MIG));
    for (size_t i = 0; i < n; i++)
        assert_int_equal(f[i].level, DOC_INFO);
    g.persistence = true;
    g.compute_mode = 0;
    g.mig = false;
    n = examine(&g, &h, f);
    assert_null(find(f, n, DOC_PERSISTENCE));
    assert_null(find(f, n, DOC_COMPUTE_MODE));
    assert_null(find(f, n, DOC_MIG));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clean_card_has_nothing_to_do),
        cmocka_unit_test(idle_needs_age_and_no_recent_work),
        cmocka_unit_test(models_of_vram_serve_go_to_vram_unload),
        cmocka_unit_test(card_settings),
        cmocka_unit_test(desktop_and_the_igpu),
        cmocka_unit_test(idle_power_and_unattributed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
