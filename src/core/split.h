/* split: one model over several GPUs, what each GPU holds. Two ways:
 * tensor parallel (vLLM's and SGLang's --tensor-parallel-size, llama.cpp's
 * --split-mode row): every layer cut across the GPUs; layer split
 * (pipeline parallel, llama.cpp's default --split-mode layer, a device_map
 * in transformers): whole layers per GPU. Pure: an estimate for one GPU in,
 * the largest share out. */
#ifndef VRAM_CORE_SPLIT_H
#define VRAM_CORE_SPLIT_H

#include "core/estimate.h"
#include "core/model.h"

enum split_kind { SPLIT_TENSOR, SPLIT_LAYER };

/* Communication buffers each GPU of a tensor-parallel group holds (NCCL's,
 * by its documented defaults: a few channels of 4 MiB buffers per peer,
 * rounded up): a model-independent allowance. */
#define SPLIT_COMM_BYTES (256ULL << 20)

/* What the GPU with the largest share holds when the model of whole (its
 * estimate on one GPU) is spread over n GPUs the kind way. */
void split_compute(const struct model_info *m, const struct estimate_result *whole, unsigned n,
                   enum split_kind kind, struct estimate_result *per_gpu);

const char *split_name(enum split_kind kind);

#endif
