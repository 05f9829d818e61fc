/* modelfile: any model into a model_info: a .gguf file, a .safetensors file,
 * a folder of safetensors shards (or with a config.json, or one GGUF), or a
 * config.json; by path, or inside a model store (model/modeldir.h). */
#ifndef VRAM_MODEL_MODELFILE_H
#define VRAM_MODEL_MODELFILE_H

#include <stddef.h>

#include "core/model.h"
#include "model/modeldir.h"

int modelfile_load(const char *path, struct model_info *m, char *err, size_t errlen);

/* file in folder d, or (file NULL) the folder itself. */
int modelfile_load_at(const struct modeldir *d, const char *file, struct model_info *m, char *err,
                      size_t errlen);

#endif
