/* llamacpp: the VRAM of a llama.cpp process (llama-server), buffer by
 * buffer, as llama.cpp sizes them (its source, 2026-06) and as NVML showed
 * them on an H200 for 64 cases (bench/RESULTS.md, issue 19):
 *   - weights: with -ngl N, the output layer (output head and final norm; a
 *     copy of the token embedding when they are tied) and the last N-1
 *     repeating layers; the token embedding itself stays in host memory;
 *   - KV cache: the context padded to 256 cells, per offloaded layer, K and
 *     V in their type (q8_0: 34 bytes per 32); sliding-window layers hold
 *     n_swa x slots + one micro-batch cells, padded, at most the context
 *     (llama-server's default: 4 slots sharing one cache);
 *   - compute buffer, for one micro-batch of n_ubatch = 512 tokens, f32:
 *     the feed-forward phase (gate, up and their product, and three
 *     hidden-wide tensors) plus an f16 mask of context x n_ubatch (two with
 *     sliding windows); without flash attention, the attention phase's
 *     scores (context x n_ubatch x heads) and softmax inputs, when larger;
 *   - runtime: the CUDA context, cuBLAS and ggml's pool, 604 MiB with
 *     quantized weights; 16-bit weights go through cuBLAS with f16
 *     conversions (56 MiB + a micro-batch x ff in f16); without flash
 *     attention the pool holds the scores in f16 (50 MiB + context x
 *     n_ubatch x heads x 2), whichever is larger; with layers left on the
 *     CPU, 48 MiB and one layer's K and V more (llama.cpp sends large CPU
 *     matmuls to the GPU with their operands). */
#include "core/llamacpp.h"

#include <string.h>

#define MiB (1024.0 * 1024.0)

static uint64_t pad256(uint64_t n)
{
    return (n + 255) / 256 * 256;
}

/* Bytes of one repeating layer's weights, and of the output layer. */
static void layer_weights(const struct model_info *m, const struct estimate_precision *p,
                          bool as_stored, double *per_layer, double *output, double *total_layers)
{
    double b = p->bits / 8, embed = (double)m->vocab * m->hidden * b;
    if (as_stored && (m->embed_bytes || m->output_bytes)) {
        uint64_t sum = 0;
        for (unsigned i = 0; i < m->layers && i < MODEL_MAX_LAYERS; i++)
            sum += m->layer_bytes[i];
        *total_layers = (double)sum;
        *output = (double)m->output_bytes + (m->tied_embeddings ? (double)m->embed_bytes : 0);
        *per_layer = m->layers ? *total_layers / m->layers : 0;
        return;
    }
    double all = (double)m->params * b;
    *output = embed; /* the head, or the embedding's copy when tied */
    *total_layers = all - embed - (m->tied_embeddings ? 0 : embed);
    if (*total_layers < 0)
        *total_layers = 0;
    *per_layer = m->layers ? *total_layers / m->layers : 0;
}

/* The weights of the last n repeating layers. */
static double last_layers(const struct model_info *m, unsigned n, bool per_layer_known,
                          double per_layer)
{
    if (!per_layer_known || m->layers > MODEL_MAX_LAYERS)
        return per_layer * n;
    double sum = 0;
    for (unsigned i = m->layers - n; i < m->layers; i++)
        sum += (double)m->layer_bytes[i];
    return sum;
}

unsigned llamacpp_all_layers(const struct model_info *m)
{
    return m->layers + 1;
}

void llamacpp_estimate(const struct model_info *m, const struct estimate_opts *o,
                       const struct estimate_precision *p, struct estimate_result *r)
{
    bool as_stored = m->weight_bytes && m->stored_bits > 0 && p->bits == m->stored_bits;
    unsigned all = llamacpp_all_layers(m);
    unsigned ngl = o->ngl < 0 || (unsigned)o->ngl > all ? all : (unsigned)o->ngl;
    unsigned on_gpu = ngl ? ngl - 1 : 0; /* repeating layers: the output layer goes first */
    double per_layer, output, total_layers;
    layer_weights(m, p, as_stored, &per_layer, &output, &total_layers);
    bool known = as_stored && (m->embed_bytes || m->output_bytes);
    r->weights = (uint64_t)((ngl ? output : 0) + last_layers(m, on_gpu, known, per_layer));
    r->gpu_layers = ngl;

    uint64_t ctx = pad256(o->ctx);
    double ub = o->ctx < 512 ? (double)o->ctx : 512;
    double kvb = (o->kv_bits > 0 ? o->kv_bits : 16) / 8;
    double row = (double)m->kv_heads * m->head_dim * 2 * kvb; /* K and V, one cell */
    unsigned swa_layers = m->sliding_window ? m->sliding_layers : 0;
    uint64_t swa_cells = ctx;
    if (swa_layers) {
        uint64_t want = pad256(m->sliding_window * 4 + (uint64_t)ub);
        swa_cells = want < ctx ? want : ctx;
    }
    double gpu_swa = m->layers ? (double)on_gpu * swa_layers / m->layers : 0;
    r->kv_cache = (uint64_t)(row * ((on_gpu - gpu_swa) * (double)ctx + gpu_swa * (double)swa_cells));

    double ff = (double)m->ff * (m->experts ? m->experts_used : 1);
    double q = (double)m->heads * m->head_dim, kv = (double)m->kv_heads * m->head_dim;
    double masks = ub * 2 * ((double)ctx + (swa_layers ? (double)swa_cells : 0));
    double compute = ub * 4 * 3 * (ff + m->hidden) + masks;
    if (o->no_flash_attn) {
        double attn = (double)ctx * ub * (m->heads * 4.0 + 4) + ub * 4 * 2 * (m->hidden + q + kv);
        compute = attn > compute ? attn : compute;
    }
    r->activations = (uint64_t)compute;

    double pool = p->bits >= 16 ? 56 * MiB + ub * ff * 2 : 0;
    if (o->no_flash_attn) {
        double scores = 50 * MiB + (double)ctx * ub * m->heads * 2;
        pool = scores > pool ? scores : pool;
    }
    double partial = ngl < all ? 48 * MiB + row * (double)ctx : 0;
    r->runtime = (uint64_t)(604 * MiB + pool + partial);
}

int llamacpp_fit_layers(const struct model_info *m, const struct estimate_opts *o,
                        const struct estimate_precision *p, uint64_t room,
                        struct estimate_result *r)
{
    struct estimate_opts t = *o;
    for (int n = (int)llamacpp_all_layers(m); n >= 0; n--) {
        t.ngl = n;
        memset(r, 0, sizeof *r);
        r->prec = *p;
        llamacpp_estimate(m, &t, p, r);
        r->total = r->weights + r->kv_cache + r->activations + r->runtime;
        if (r->total <= room)
            return n;
    }
    return -1;
}

uint64_t llamacpp_fit_ctx(const struct model_info *m, const struct estimate_opts *o,
                          const struct estimate_precision *p, uint64_t room)
{
    struct estimate_opts t = *o;
    struct estimate_result r;
    uint64_t lo = 0, hi = m->max_ctx ? m->max_ctx : 131072;
    t.ngl = -1;
    while (lo < hi) { /* the largest multiple of 256 that fits */
        uint64_t mid = (lo + hi + 256) / 2 / 256 * 256;
        if (mid <= lo)
            break;
        t.ctx = mid;
        memset(&r, 0, sizeof r);
        llamacpp_estimate(m, &t, p, &r);
        if (r.weights + r.kv_cache + r.activations + r.runtime <= room)
            lo = mid;
        else
            hi = mid - 256;
    }
    return lo;
}
