/* The estimator: parameter counts of the golden configs equal what
 * transformers counts for the same configs, and the parts of an estimate
 * follow their formulas. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "core/err.h"
#include "core/estimate.h"
#include "core/fitplan.h"
#include "model/hfconfig.h"

#define GiB (1ULL << 30)

static struct model_info load(const char *name)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/tests/fixtures/configs/%s.json", SRC_ROOT, name);
    struct model_info m;
    memset(&m, 0, sizeof m);
    if (hfconfig_load(path, &m, err, sizeof err) != VRAM_OK)
        fail_msg("%s", err);
    return m;
}

static void golden_params(void **st)
{
    (void)st;
    /* what transformers' sum(p.numel()) gave for each config (bench/fit_measured_h200.jsonl) */
    static const struct {
        const char *name;
        uint64_t params;
    } golden[] = {
        {"qwen2-0.5b", 494032768},   {"llama3.2-1b", 1235814400},      {"qwen3-1.7b", 1720574976},
        {"gemma2-2b", 2614341888},   {"phi3-mini-3.8b", 3821079552},   {"mistral-7b", 7248023552},
        {"llama3.1-8b", 8030261248}, {"mixtral-8x7b", 46702792704ULL},
    };
    for (size_t i = 0; i < sizeof golden / sizeof golden[0]; i++) {
        struct model_info m = load(golden[i].name);
        if (m.params != golden[i].params)
            fail_msg("%s: %llu, want %llu", golden[i].name, (unsigned long long)m.params,
                     (unsigned long long)golden[i].params);
    }
    struct model_info mx = load("mixtral-8x7b");
    assert_int_equal(mx.experts, 8);
    assert_int_equal(mx.experts_used, 2);
    assert_true(mx.params_active < mx.params / 3); /* 12.9 B of 46.7 B */
    struct model_info g = load("gemma2-2b");
    assert_int_equal(g.head_dim, 256);
    assert_int_equal(g.sliding_layers, 13); /* every other layer */
}

static void kv_cache_formula(void **st)
{
    (void)st;
    struct model_info m = load("llama3.1-8b");
    struct estimate_opts o;
    estimate_defaults(&o);
    o.ctx = 8192;
    struct estimate_precision p;
    estimate_precision("bf16", &p);
    struct estimate_result r;
    estimate_compute(&m, &o, &p, &r);
    /* 2 (k, v) x 32 layers x 8 kv heads x 128 x 8192 tokens x 2 bytes = 1 GiB */
    assert_true(r.kv_cache == GiB);
    assert_true(r.weights == 8030261248ULL * 2);
    assert_true(r.total == r.weights + r.kv_cache + r.activations + r.runtime);
    o.kv_bits = 8;
    estimate_compute(&m, &o, &p, &r);
    assert_true(r.kv_cache == GiB / 2);
    /* the window caps the cache of sliding layers */
    struct model_info g = load("gemma2-2b");
    o.kv_bits = 0;
    o.ctx = 16384;
    estimate_compute(&g, &o, &p, &r);
    uint64_t per = 2ULL * 4 * 256 * 2; /* bytes per token and layer */
    assert_true(r.kv_cache == per * (13 * 16384 + 13 * 4096));
}

static void training_adds_up(void **st)
{
    (void)st;
    struct model_info m = load("mistral-7b");
    struct estimate_opts o;
    estimate_defaults(&o);
    o.train = true;
    struct estimate_precision p;
    estimate_precision("bf16", &p);
    struct estimate_result r;
    estimate_compute(&m, &o, &p, &r);
    /* AdamW: gradients P, moments 2P, a temporary P, all in bf16 */
    assert_true(r.gradients == m.params * 2);
    assert_true(r.optimizer == m.params * 2 * 3);
    uint64_t sgd_total, lora_total;
    o.optim = ESTIMATE_SGD;
    estimate_compute(&m, &o, &p, &r);
    sgd_total = r.total;
    assert_true(r.optimizer == 0);
    o.optim = ESTIMATE_ADAMW;
    o.lora_rank = 16;
    estimate_compute(&m, &o, &p, &r);
    lora_total = r.total;
    assert_true(r.gradients < m.params / 50); /* adapters only */
    assert_true(lora_total < sgd_total);
}

static void precisions(void **st)
{
    (void)st;
    struct estimate_precision p;
    assert_int_equal(estimate_precision("q4", &p), 0);
    assert_true(p.bits == 4.5);
    assert_int_equal(estimate_precision("Q8_0", &p), 0);
    assert_int_equal(estimate_precision("q11", &p), -1);
    struct model_info m = load("llama3.1-8b");
    struct estimate_precision c[8];
    int n = estimate_candidates(&m, c, 8);
    assert_int_equal(n, 3); /* bf16, int8, q4 for a bf16 model */
    assert_string_equal(c[0].name, "bf16");
}

static void plan(void **st)
{
    (void)st;
    uint64_t need[3] = {15 * GiB, 5 * GiB, 8 * GiB};
    uint64_t room[2] = {14 * GiB, 24 * GiB};
    struct fitplan pl;
    fitplan_make(need, 3, room, 2, &pl);
    assert_int_equal(pl.gpu_of[0], 1); /* the biggest takes the roomiest */
    assert_int_equal(pl.gpu_of[2], 0); /* then 8 GiB: GPU 0 has 14 left, GPU 1 has 9 */
    assert_int_equal(pl.gpu_of[1], 1); /* then 5 GiB: GPU 1 has 9, GPU 0 has 6 */
    uint64_t need2[2] = {20 * GiB, 20 * GiB};
    fitplan_make(need2, 2, room, 2, &pl);
    assert_int_equal(pl.gpu_of[0], 1);
    assert_int_equal(pl.gpu_of[1], -1); /* takes turns */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(golden_params),
        cmocka_unit_test(kv_cache_formula),
        cmocka_unit_test(training_adds_up),
        cmocka_unit_test(precisions),
        cmocka_unit_test(plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
