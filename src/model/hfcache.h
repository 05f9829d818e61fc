/* hfcache: models in the Hugging Face cache, by repository name
 * ("Qwen/Qwen2.5-7B-Instruct"): models--ORG--NAME/snapshots/REVISION holds
 * links into the repository's blobs/, the revision main points to in
 * refs/main. */
#ifndef VRAM_MODEL_HFCACHE_H
#define VRAM_MODEL_HFCACHE_H

#include <stddef.h>

#include "model/modelref.h"

/* The cache: $HF_HUB_CACHE, else $HF_HOME/hub, else
 * $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub. */
size_t hfcache_roots(char roots[][MODELREF_PATH], size_t max);

/* "ORG/NAME" (or "ORG/NAME/FILE", one file of it) in the cache at root: 0
 * and ref, 1 when the cache has no such repository, VRAM_EINPUT with why. */
int hfcache_find(const char *root, const char *name, struct modelref *ref, char *err,
                 size_t errlen);

/* Every model repository of the cache, as ollama_list. */
int hfcache_list(const char *root, int (*each)(const struct modelref *ref, const char *err, void *arg),
                 void *arg);

#endif
