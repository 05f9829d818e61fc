/* estimate: how much VRAM a model needs, for inference or training, at a
 * precision, under a runtime. Pure: a model and options in, a breakdown
 * out. Every formula and constant is in estimate.c with where it comes
 * from. */
#ifndef VRAM_CORE_ESTIMATE_H
#define VRAM_CORE_ESTIMATE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/model.h"

enum estimate_runtime { ESTIMATE_TORCH, ESTIMATE_LLAMACPP, ESTIMATE_VLLM };
enum estimate_optim { ESTIMATE_ADAMW, ESTIMATE_ADAM8BIT, ESTIMATE_SGD };

struct estimate_opts {
    enum estimate_runtime runtime;
    uint64_t ctx, batch; /* inference: prompt tokens, sequences */
    double kv_bits;      /* 0: the compute precision's */
    bool train;
    enum estimate_optim optim;
    uint64_t seq; /* training sequence length */
    bool mixed;   /* fp32 master weights, 16-bit compute */
    bool checkpointing;
    unsigned lora_rank; /* 0: full fine-tuning */
    /* llama.cpp */
    int ngl;            /* layers on the GPU, as -ngl; -1: all */
    bool no_flash_attn; /* -fa off (llama.cpp turns it on where it can) */
};

struct estimate_precision {
    char name[24];       /* "bf16", "int8", "q4 (4.5 bits/w)" */
    double bits;         /* weight bits per parameter */
    double compute_bits; /* activations and KV cache: 16 or 32 */
    bool stored;         /* the file as it is, quantized: any other is another download */
};

struct estimate_result {
    struct estimate_precision prec;
    uint64_t weights, kv_cache, activations, runtime, total;
    /* training only: gradients and optimizer state, inside activations'
     * neighbours in total */
    uint64_t gradients, optimizer;
    unsigned gpu_layers; /* llama.cpp: the -ngl this is for, output layer counted */
    /* PyTorch inference: the part of runtime that is a block the caching
     * allocator keeps from loading the model (the size of its embedding),
     * what the transients do not cover; a process that empties its cache
     * after loading (torch.cuda.empty_cache()) does without it */
    uint64_t kept_from_load;
};

void estimate_defaults(struct estimate_opts *o);

/* Parses a precision name: fp32, fp16, bf16, fp8, int8, q8_0, q6_k, q5_k,
 * q4 / q4_k / q4_0, q3_k, q2_k. -1 if unknown. */
int estimate_precision(const char *name, struct estimate_precision *p);

/* The precisions worth showing for a model stored at stored_bits. */
int estimate_candidates(const struct model_info *m, struct estimate_precision *out, int max);

void estimate_compute(const struct model_info *m, const struct estimate_opts *o,
                      const struct estimate_precision *p, struct estimate_result *r);

#endif
