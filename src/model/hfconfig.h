/* hfconfig: a Hugging Face config.json read into a model_info: enough to
 * count a decoder's parameters and size its KV cache without any weights. */
#ifndef VRAM_MODEL_HFCONFIG_H
#define VRAM_MODEL_HFCONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "core/model.h"
#include "model/reader.h"

/* A model's config.json is a few KiB; one larger than this is refused. */
#define HFCONFIG_MAX (4ULL << 20)

/* What r holds from its position on (at most limit bytes, else refused),
 * name standing for the file in messages. 0, or VRAM_EINPUT with "NAME:
 * what is wrong" in err. Counts the parameters from the shape (m->params)
 * unless they are already set. */
int hfconfig_parse(struct reader *r, const char *name, uint64_t limit, struct model_info *m,
                   char *err, size_t errlen);

/* The same from a file (HFCONFIG_MAX). */
int hfconfig_load(const char *path, struct model_info *m, char *err, size_t errlen);

#endif
