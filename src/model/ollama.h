/* ollama: models in Ollama's store, by the names `ollama list` shows
 * ("llama3.1:8b", "user/model:tag", "host/ns/model:tag"): a manifest under
 * manifests/HOST/NAMESPACE/MODEL/TAG names the GGUF blob in blobs/. */
#ifndef VRAM_MODEL_OLLAMA_H
#define VRAM_MODEL_OLLAMA_H

#include <stddef.h>

#include "model/modelref.h"
#include "model/reader.h"

#define OLLAMA_MAX_MANIFEST (1ULL << 20) /* real ones: under 2 KiB */

/* The stores to look in: $OLLAMA_MODELS if set, else ~/.ollama/models and
 * the Linux service's /usr/share/ollama/.ollama/models. How many. */
size_t ollama_roots(char roots[][MODELREF_PATH], size_t max);

/* name in the store at root: 0 and ref, 1 when it has no such model (or
 * name is not an Ollama name), VRAM_EINPUT with "PATH: why" when the store
 * is broken or hostile (a manifest too big or not JSON, a digest that is no
 * digest, a blob missing, a link out of the store). */
int ollama_find(const char *root, const char *name, struct modelref *ref, char *err,
                size_t errlen);

/* Every model of the store: each(ref) or, for one that cannot be read,
 * each with ref->file "" and why in err. */
int ollama_list(const char *root, int (*each)(const struct modelref *ref, const char *err, void *arg),
                void *arg);

/* The model layer's digest from a manifest (r, name for messages): 0 and
 * "sha256-HEX" in blob, or VRAM_EINPUT. For the fuzzer too. */
int ollama_manifest(struct reader *r, const char *name, uint64_t limit, char *blob, size_t len,
                    char *err, size_t errlen);

#endif
