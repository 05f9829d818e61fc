/* hfconfig: a Hugging Face config.json read into a model_info: enough to
 * count a decoder's parameters and size its KV cache without any weights. */
#ifndef VRAM_MODEL_HFCONFIG_H
#define VRAM_MODEL_HFCONFIG_H

#include <stddef.h>

#include "core/model.h"

/* Returns 0, or VRAM_EINPUT with "FILE: what is wrong" in err. Counts the
 * parameters from the shape (m->params) unless they are already set. */
int hfconfig_load(const char *path, struct model_info *m, char *err, size_t errlen);

/* The same from text in memory (name stands for the file). */
int hfconfig_parse(const char *text, size_t len, const char *name, struct model_info *m, char *err,
                   size_t errlen);

#endif
