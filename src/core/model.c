/* model: counting a decoder's parameters from its shape.
 *
 * The common decoders (llama, mistral, qwen2/3, gemma, phi3, mixtral) share
 * one layout: token embeddings, per layer attention (q, k, v, o projections,
 * qwen2 with q/k/v biases, qwen3 with q/k norms) and a gated MLP (gate, up,
 * down; MoE: one per expert and a router), two norms per layer (gemma2/3:
 * four), a final norm, and an output head unless tied to the embeddings. */
#include "core/model.h"

#include <string.h>

void model_complete(struct model_info *m)
{
    if (m->kv_heads == 0)
        m->kv_heads = m->heads;
    if (m->head_dim == 0 && m->heads)
        m->head_dim = m->hidden / m->heads;
    if (m->experts_used == 0)
        m->experts_used = m->experts ? 2 : 0;
    if (m->sliding_window && m->sliding_layers == 0)
        m->sliding_layers = m->layers;
}

uint64_t model_count_params(const struct model_info *m, uint64_t *active)
{
    uint64_t h = m->hidden, hd = m->head_dim ? m->head_dim : (m->heads ? h / m->heads : 0);
    uint64_t q = (uint64_t)m->heads * hd, kv = (uint64_t)m->kv_heads * hd;
    uint64_t attn = h * q + 2 * h * kv + q * h;
    if (!strcmp(m->arch, "qwen2") || !strcmp(m->arch, "qwen2_moe"))
        attn += q + 2 * kv; /* q, k, v biases */
    if (!strcmp(m->arch, "qwen3") || !strcmp(m->arch, "qwen3_moe") ||
        !strncmp(m->arch, "gemma3", 6))
        attn += 2 * hd; /* q and k norms */
    uint64_t mlp = 3 * h * m->ff;
    uint64_t mlp_active = mlp;
    if (m->experts) {
        mlp = (uint64_t)m->experts * 3 * h * m->ff + h * m->experts;
        mlp_active = (uint64_t)m->experts_used * 3 * h * m->ff + h * m->experts;
    }
    unsigned norms = !strncmp(m->arch, "gemma2", 6) || !strncmp(m->arch, "gemma3", 6) ? 4 : 2;
    uint64_t per_layer = attn + mlp + norms * h;
    uint64_t per_layer_active = attn + mlp_active + norms * h;
    uint64_t embed = (uint64_t)m->vocab * h;
    uint64_t head = m->tied_embeddings ? 0 : (uint64_t)m->vocab * h;
    uint64_t total = embed + head + h + m->layers * per_layer;
    if (active)
        *active = embed + head + h + m->layers * per_layer_active;
    return total;
}
