/* modelfile: any model path into a model_info: a .gguf file, a .safetensors
 * file, a directory of safetensors shards, or a config.json. */
#ifndef VRAM_MODEL_MODELFILE_H
#define VRAM_MODEL_MODELFILE_H

#include <stddef.h>

#include "core/model.h"

int modelfile_load(const char *path, struct model_info *m, char *err, size_t errlen);

#endif
