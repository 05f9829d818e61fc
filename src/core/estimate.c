/* estimate: how much VRAM a model needs.
 *
 * Constants for the torch profile were measured on an H200 with PyTorch
 * 2.11 and transformers 5.17, random-weight models built from config.json
 * (bench/fit_measured_h200.jsonl, bench/RESULTS.md):
 *   - a process's memory beyond what the model's tensors take is 770 MiB
 *     (CUDA context 520 MiB, libraries' kernels 170 MiB, and 80 MiB the
 *     allocator keeps for cuBLAS workspaces and small blocks: TORCH_FIXED);
 *   - the allocator reserves more than it hands out: about 15% of the
 *     transient tensors during inference
 *     (rounding and fragmentation of large blocks); 5% during training;
 *   - one forward pass over ctx tokens keeps, at its peak, the gated MLP's
 *     three ctx x ff tensors and about five ctx x hidden tensors (residual,
 *     norm, attention input and output, rotary), plus the KV cache;
 *   - attention uses a fused kernel (no ctx x ctx matrix) in 16-bit, and in
 *     32-bit when every query head has its own KV head; in 32-bit with
 *     grouped KV heads PyTorch falls back to the plain math path, which holds
 *     the scores and the softmax (heads x ctx x ctx each) and a ctx x ctx
 *     mask;
 *   - past its sliding window, a model gets explicit ctx x ctx masks (one
 *     causal, one windowed) instead of the is_causal flag (Gemma 2, checked on
 *     held-out measurements: bench/fit_heldout_h200.jsonl);
 *   - one AdamW step (foreach implementation) peaks at the update: weights,
 *     gradients, two moments and one temporary the size of the weights;
 *   - a process that loads a model and generates (and does not call
 *     torch.cuda.empty_cache(), which the bench's scripts do before they
 *     measure) keeps a freed block the size of the token embedding (vocab x
 *     hidden, in the compute precision) from loading; the transients of the
 *     first forward reuse it, so it shows only where they are smaller. Read
 *     off two measurements from outside (peak process memory while
 *     generating, issue 31): Gemma 2 2B at 2k was 12.0% above the estimate
 *     without it (within 2.2% with it), Qwen2.5 0.5B 6.8% (within 0.4%).
 * The llama.cpp profile is in core/llamacpp.c, measured. The vLLM profile
 * follows vLLM's documented rules and is computed, not measured (its output
 * says so). */
#include "core/estimate.h"

#include "core/llamacpp.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define MiB (1024.0 * 1024.0)
/* what a PyTorch process holds whatever the model: the CUDA context and
 * libraries' kernels, 690 MiB once generate() has run (bench/RESULTS.md,
 * issue 19), and 80 MiB the caching allocator keeps that no tensor of the
 * model accounts for (cuBLAS workspaces, its small-block segments); read off
 * the residuals of 0.5B-2B models at 512-2048 tokens, where it is most of
 * the error, and an overestimate of up to 1.5% for the others */
#define TORCH_FIXED ((690 + 80) * MiB)

void estimate_defaults(struct estimate_opts *o)
{
    memset(o, 0, sizeof *o);
    o->runtime = ESTIMATE_TORCH;
    o->ctx = 4096;
    o->batch = 1;
    o->optim = ESTIMATE_ADAMW;
    o->seq = 1024;
    o->ngl = -1;
}

int estimate_precision(const char *name, struct estimate_precision *p)
{
    static const struct {
        const char *name, *label;
        double bits, compute;
    } table[] = {
        {"fp32", "fp32", 32, 32},
        {"f32", "fp32", 32, 32},
        {"fp16", "fp16", 16, 16},
        {"f16", "fp16", 16, 16},
        {"bf16", "bf16", 16, 16},
        {"fp8", "fp8", 8, 16},
        {"int8", "int8", 8, 16},
        {"q8_0", "q8_0", 8.5, 16},
        {"q8", "q8_0", 8.5, 16},
        {"q6_k", "q6_k", 6.5625, 16},
        {"q5_k", "q5_k", 5.5, 16},
        {"q5_k_m", "q5_k_m", 5.69, 16},
        {"q4", "q4 (4.5 bits/w)", 4.5, 16},
        {"q4_k", "q4_k", 4.5, 16},
        {"q4_k_m", "q4_k_m", 4.85, 16},
        {"q4_0", "q4_0", 4.5, 16},
        {"int4", "int4", 4.5, 16},
        {"q3_k", "q3_k", 3.4375, 16},
        {"q2_k", "q2_k", 2.625, 16},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcasecmp(name, table[i].name)) {
            snprintf(p->name, sizeof p->name, "%s", table[i].label);
            p->bits = table[i].bits;
            p->compute_bits = table[i].compute;
            return 0;
        }
    return -1;
}

int estimate_candidates(const struct model_info *m, struct estimate_precision *out, int max)
{
    const char *names[5];
    int n = 0;
    if (m->stored_bits >= 32)
        names[n++] = "fp32";
    names[n++] = "bf16";
    names[n++] = "int8";
    names[n++] = "q4";
    int k = 0;
    for (int i = 0; i < n && k < max; i++)
        if (estimate_precision(names[i], &out[k]) == 0)
            k++;
    /* a quantized file is shown as stored, first */
    if (m->stored_bits > 0 && m->stored_bits < 16 && k < max) {
        memmove(out + 1, out, (size_t)(k < max ? k : max - 1) * sizeof *out);
        /* by the file's own type when it says one (Q4_K_M), as people name it */
        snprintf(out[0].name, sizeof out[0].name, "%s (as stored)",
                 m->quant[0] ? m->quant : m->stored);
        out[0].bits = m->stored_bits;
        out[0].compute_bits = 16;
        out[0].stored = true;
        k = k < max ? k + 1 : max;
    }
    return k;
}

static uint64_t kv_bytes(const struct model_info *m, const struct estimate_opts *o, double bits,
                         uint64_t tokens)
{
    double per_token_layer = 2.0 * m->kv_heads * m->head_dim * bits / 8;
    unsigned swa = m->sliding_window ? m->sliding_layers : 0;
    uint64_t win = m->sliding_window && m->sliding_window < tokens ? m->sliding_window : tokens;
    double total = per_token_layer * ((double)(m->layers - swa) * tokens + (double)swa * win);
    return (uint64_t)(total * (double)o->batch);
}

/* One forward pass over ctx tokens in PyTorch: the transient peak. */
static double torch_activations(const struct model_info *m, const struct estimate_opts *o,
                                double cb, uint64_t ctx)
{
    double b = cb / 8, t = (double)ctx * (double)o->batch;
    unsigned experts_ff = m->experts ? m->experts_used : 1;
    double mlp = 3.0 * t * m->ff * experts_ff * b;
    double hidden = 5.0 * t * m->hidden * b;
    double qkv = t * (m->heads + 2.0 * m->kv_heads) * m->head_dim * b;
    double attn = qkv;
    if (cb >= 32 && m->kv_heads < m->heads) /* the math path: scores, softmax, mask */
        attn += (2.0 * m->heads + 1) * (double)ctx * (double)ctx * 4 * (double)o->batch;
    else if (m->sliding_window && ctx > m->sliding_window) /* explicit masks, full and windowed */
        attn += 2.0 * (double)ctx * (double)ctx * b;
    double logits = (double)o->batch * m->vocab * 4;
    return mlp + hidden + attn + logits;
}

static void inference(const struct model_info *m, const struct estimate_opts *o,
                      const struct estimate_precision *p, struct estimate_result *r)
{
    double kvb = o->kv_bits > 0 ? o->kv_bits : p->compute_bits;
    r->kv_cache = kv_bytes(m, o, kvb, o->ctx);
    switch (o->runtime) {
    case ESTIMATE_TORCH: {
        double act = torch_activations(m, o, p->compute_bits, o->ctx);
        r->activations = (uint64_t)act;
        /* context + libraries, and the allocator's slack on what moves */
        double moving = act + (double)r->kv_cache, slack = 0.15 * moving;
        /* a freed block the size of the embedding stays in the allocator
         * from loading; the first forward's tensors reuse it, so it counts
         * where they are smaller: short contexts, small models */
        double kept = (double)m->vocab * m->hidden * p->compute_bits / 8 - moving - slack;
        r->kept_from_load = kept > 0 ? (uint64_t)kept : 0;
        r->runtime = (uint64_t)(TORCH_FIXED + slack) + r->kept_from_load;
        break;
    }
    case ESTIMATE_LLAMACPP:
        llamacpp_estimate(m, o, p, r);
        break;
    case ESTIMATE_VLLM: {
        /* vLLM profiles one batch of max_num_batched_tokens (8192 by
         * default) and keeps CUDA graphs */
        struct estimate_opts v = *o;
        v.batch = 1;
        r->activations = (uint64_t)torch_activations(m, &v, p->compute_bits, 8192);
        r->runtime = (uint64_t)(1024 * MiB);
        break;
    }
    }
}

static void training(const struct model_info *m, const struct estimate_opts *o,
                     const struct estimate_precision *p, struct estimate_result *r)
{
    double P = (double)m->params, b = p->bits / 8;
    double trainable = P;
    if (o->lora_rank) {
        /* adapters on q, k, v, o and the three MLP matrices of each layer */
        double hd = (double)m->head_dim;
        double per_layer = o->lora_rank * ((m->hidden + m->heads * hd) * 2.0 +
                                           (m->hidden + m->kv_heads * hd) * 2.0 +
                                           (m->hidden + (double)m->ff) * 3.0);
        trainable = per_layer * m->layers;
    }
    double master = o->mixed ? 4.0 : b; /* fp32 master weights */
    double state = o->optim == ESTIMATE_ADAMW      ? 2 * master
                   : o->optim == ESTIMATE_ADAM8BIT ? 2.0
                                                   : 0;
    double temp = o->optim == ESTIMATE_ADAMW ? master : o->optim == ESTIMATE_ADAM8BIT ? 0.5 : 0;
    r->weights = (uint64_t)(P * b + (o->mixed && !o->lora_rank ? trainable * 4 : 0) +
                            (o->lora_rank ? trainable * master : 0));
    r->gradients = (uint64_t)(trainable * master);
    r->optimizer = (uint64_t)(trainable * (state + temp));
    /* saved for backward, per layer: about 6 hidden-wide and 4 ff-wide
     * tensors per token (norms, q/k/v/o inputs, residuals; gate, up, act,
     * down input), plus the loss over all positions in fp32 */
    double cb = (o->mixed ? 16 : p->compute_bits) / 8;
    double t = (double)o->seq * (double)o->batch;
    double per_layer = t * (6.0 * m->hidden + 4.0 * m->ff) * cb;
    double act =
        o->checkpointing ? m->layers * t * m->hidden * cb + per_layer : m->layers * per_layer;
    act += t * m->vocab * (cb + 8);
    r->activations = (uint64_t)act;
    r->kv_cache = 0;
    /* the peak: the optimizer step, or the start of backward */
    double at_step = (double)r->weights + r->gradients + r->optimizer;
    double in_backward = (double)r->weights + r->gradients + act;
    double peak = at_step > in_backward ? at_step : in_backward;
    r->runtime = (uint64_t)(TORCH_FIXED + 0.05 * peak);
    r->total = (uint64_t)peak + r->runtime;
}

void estimate_compute(const struct model_info *m, const struct estimate_opts *o,
                      const struct estimate_precision *p, struct estimate_result *r)
{
    memset(r, 0, sizeof *r);
    r->prec = *p;
    if (o->train) {
        training(m, o, p, r);
        return;
    }
    bool as_stored = m->weight_bytes && m->stored_bits > 0 && p->bits == m->stored_bits;
    r->weights = as_stored ? m->weight_bytes : (uint64_t)((double)m->params * p->bits / 8);
    inference(m, o, p, r);
    r->total = r->weights + r->kv_cache + r->activations + r->runtime;
}
