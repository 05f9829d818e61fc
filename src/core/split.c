/* split: the shares. What is cut and what is repeated on every GPU:
 *   tensor: weights (attention heads, MLP columns, the vocabulary of the
 *     embeddings and the head) and the KV cache (by KV head; a KV head is
 *     repeated when there are more GPUs than KV heads, as vLLM does) are
 *     cut n ways; activations mostly too (each GPU computes its heads and
 *     columns), plus communication buffers; the runtime (the CUDA context,
 *     the framework's own) is on every GPU.
 *   layer: each GPU holds ceil(layers / n) layers' weights and KV cache,
 *     and the embeddings or the head on top (the first GPU the one, the
 *     last the other); activations are whole on each (a full-width forward
 *     of its layers) and so is the runtime. */
#include "core/split.h"

const char *split_name(enum split_kind kind)
{
    return kind == SPLIT_TENSOR ? "tensor" : "layer";
}

static uint64_t share(uint64_t bytes, uint64_t part, uint64_t whole)
{
    return whole ? (uint64_t)((double)bytes * (double)part / (double)whole + 0.5) : bytes;
}

void split_compute(const struct model_info *m, const struct estimate_result *whole, unsigned n,
                   enum split_kind kind, struct estimate_result *g)
{
    *g = *whole;
    if (n <= 1)
        return;
    if (kind == SPLIT_TENSOR) {
        unsigned kvh = m->kv_heads ? m->kv_heads : m->heads;
        g->weights = share(whole->weights, 1, n);
        g->kv_cache =
            kvh && kvh < n ? share(whole->kv_cache, 1, kvh) : share(whole->kv_cache, 1, n);
        g->activations = share(whole->activations, 1, n) + SPLIT_COMM_BYTES;
    } else {
        unsigned layers = m->layers ? m->layers : 1;
        unsigned per = (layers + n - 1) / n;
        /* the embedding and the head: two vocab x hidden matrices (one when tied) */
        double bytes_per = whole->weights && m->params ? (double)whole->weights / (double)m->params
                                                       : whole->prec.bits / 8;
        uint64_t ends = (uint64_t)((double)m->vocab * m->hidden * bytes_per);
        uint64_t both = m->tied_embeddings ? ends : 2 * ends;
        uint64_t body = whole->weights > both ? whole->weights - both : whole->weights;
        /* the first GPU holds the embedding, the last the head (a tied one
         * too: each end needs the matrix) */
        g->weights = share(body, per, layers) + ends;
        g->kv_cache = share(whole->kv_cache, per, layers);
    }
    if (whole->gradients || whole->optimizer) { /* training: its peak, cut alike */
        uint64_t peak = whole->total > whole->runtime ? whole->total - whole->runtime : 0;
        g->gradients = share(whole->gradients, 1, n);
        g->optimizer = share(whole->optimizer, 1, n);
        g->total = (kind == SPLIT_TENSOR
                        ? share(peak, 1, n)
                        : share(peak, (m->layers + n - 1) / n, m->layers ? m->layers : 1)) +
                   g->runtime;
        return;
    }
    g->total = g->weights + g->kv_cache + g->activations + g->runtime;
}
