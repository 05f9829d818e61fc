/* llamacpp: how much VRAM a llama.cpp process takes (llama-server, and what
 * runs it: Ollama, LM Studio, llama-swap), with all or some layers on the
 * GPU (-ngl). Pure. */
#ifndef VRAM_CORE_LLAMACPP_H
#define VRAM_CORE_LLAMACPP_H

#include <stdint.h>

#include "core/estimate.h"
#include "core/model.h"

/* -ngl that puts every layer on the GPU, the output layer counted, as
 * llama.cpp counts it ("offloaded 33/33 layers"). */
unsigned llamacpp_all_layers(const struct model_info *m);

/* The GPU's share of the process at o->ngl (-1: all) and o->ctx tokens (the
 * context every slot shares, llama.cpp's -c). Fills weights, kv_cache,
 * activations (the compute buffer), runtime and gpu_layers; not total. */
void llamacpp_estimate(const struct model_info *m, const struct estimate_opts *o,
                       const struct estimate_precision *p, struct estimate_result *r);

/* The most layers (-ngl) whose total fits in room, with r its estimate; -1
 * when not even -ngl 0 fits. */
int llamacpp_fit_layers(const struct model_info *m, const struct estimate_opts *o,
                        const struct estimate_precision *p, uint64_t room,
                        struct estimate_result *r);

/* The longest context (a multiple of 256) at which every layer fits in
 * room; 0 if none. */
uint64_t llamacpp_fit_ctx(const struct model_info *m, const struct estimate_opts *o,
                          const struct estimate_precision *p, uint64_t room);

#endif
