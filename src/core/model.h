/* model: what vram knows of a model, whatever file it came from: the
 * shape that decides its memory (parameters, layers, heads, context). Plain
 * data, filled by src/model/ readers or by hand (--params ...). */
#ifndef VRAM_CORE_MODEL_H
#define VRAM_CORE_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#define MODEL_MAX_LAYERS 512 /* per-layer bytes are kept for this many */

struct model_info {
    char name[128];
    char arch[32];          /* "llama", "qwen2", ... as the file says */
    char stored[24];        /* how the weights are stored: "bf16", "q4_k", "mixed" */
    bool gguf;              /* read from a GGUF (by its magic bytes, whatever its name) */
    char quant[16];         /* GGUF: the file's type as llama.cpp and Ollama name it
                               (general.file_type: "Q4_K_M"); "" when it does not say */
    uint64_t params;        /* all parameters */
    uint64_t params_active; /* per token (MoE: the routed experts only) */
    uint64_t weight_bytes;  /* as stored, when read from weights; else 0 */
    double stored_bits;     /* bits per parameter as stored (16 for bf16) */
    unsigned layers, hidden, heads, kv_heads, head_dim, ff, vocab;
    unsigned experts, experts_used;
    uint64_t max_ctx;        /* 0: unknown */
    uint64_t sliding_window; /* 0: none */
    unsigned sliding_layers; /* how many layers use it */
    bool tied_embeddings;
    /* GGUF only: where the bytes are, for placing layers on a GPU as
     * llama.cpp does (0 when not known) */
    uint64_t embed_bytes;                   /* the token embedding */
    uint64_t output_bytes;                  /* output head, final norm, the rest */
    uint64_t layer_bytes[MODEL_MAX_LAYERS]; /* each repeating layer */
};

/* Parameters of a decoder from its shape, when no weights are at hand. */
uint64_t model_count_params(const struct model_info *m, uint64_t *active);

/* Fills head_dim, kv_heads, params_active from the others where they are 0. */
void model_complete(struct model_info *m);

#endif
