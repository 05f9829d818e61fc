/* One model over several GPUs: a tensor split cuts weights and KV cache
 * n ways (a KV head repeated when there are more GPUs than KV heads), a
 * layer split gives each GPU its layers plus an end; the runtime is on
 * every GPU; one GPU is the model whole. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/split.h"

#define GiB (1ULL << 30)

static struct model_info llama8b(void)
{
    struct model_info m = {.layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8,
                           .vocab = 128256, .params = 8030000000ULL};
    return m;
}

static void shares(void **st)
{
    (void)st;
    struct model_info m = llama8b();
    struct estimate_result w = {.weights = 16 * GiB, .kv_cache = 4 * GiB,
                                .activations = 2 * GiB, .runtime = 1 * GiB};
    w.total = w.weights + w.kv_cache + w.activations + w.runtime;
    struct estimate_result t, l, one;
    split_compute(&m, &w, 1, SPLIT_TENSOR, &one);
    assert_true(one.total == w.total);
    split_compute(&m, &w, 4, SPLIT_TENSOR, &t);
    assert_true(t.weights == 4 * GiB && t.kv_cache == 1 * GiB && t.runtime == 1 * GiB);
    assert_true(t.total == t.weights + t.kv_cache + t.activations + t.runtime);
    /* 16 GPUs, 8 KV heads: each GPU keeps a whole KV head, 1/8 of the cache */
    split_compute(&m, &w, 16, SPLIT_TENSOR, &t);
    assert_true(t.kv_cache == w.kv_cache / 8);
    /* layers: 8 of 32 each and an end (the embedding or the head) */
    split_compute(&m, &w, 4, SPLIT_LAYER, &l);
    uint64_t end = (uint64_t)((double)m.vocab * m.hidden * ((double)w.weights / m.params));
    uint64_t body = w.weights - 2 * end;
    assert_true(l.weights > body / 4 && l.weights <= body / 4 + end + 1);
    assert_true(l.kv_cache == w.kv_cache / 4 && l.activations == w.activations);
    /* 3 GPUs, 32 layers: the fullest holds 11 */
    split_compute(&m, &w, 3, SPLIT_LAYER, &l);
    assert_true(l.kv_cache == (uint64_t)((double)w.kv_cache * 11 / 32 + 0.5));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shares),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
