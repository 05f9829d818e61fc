/* lmstudio: models in LM Studio's folder, PUBLISHER/REPO/FILE.gguf (or an
 * MLX folder of safetensors), by "PUBLISHER/REPO" or "PUBLISHER/REPO/FILE". */
#ifndef VRAM_MODEL_LMSTUDIO_H
#define VRAM_MODEL_LMSTUDIO_H

#include <stddef.h>

#include "model/modelref.h"

/* ~/.lmstudio/models, and the older ~/.cache/lm-studio/models. */
size_t lmstudio_roots(char roots[][MODELREF_PATH], size_t max);

/* As hfcache_find. */
int lmstudio_find(const char *root, const char *name, struct modelref *ref, char *err,
                  size_t errlen);

/* Every model file (GGUF; projectors aside) or MLX folder, as ollama_list. */
int lmstudio_list(const char *root, int (*each)(const struct modelref *ref, const char *err, void *arg),
                  void *arg);

#endif
