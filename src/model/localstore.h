/* localstore: the model stores of this machine together (Ollama, the
 * Hugging Face cache, LM Studio, llama.cpp's cache): a model found by
 * name, all of them listed, one read into a model_info. */
#ifndef VRAM_MODEL_LOCALSTORE_H
#define VRAM_MODEL_LOCALSTORE_H

#include <stddef.h>

#include "core/model.h"
#include "model/modelref.h"

/* 0 and ref; 1 when no store has it; VRAM_EINPUT with why when the store
 * that has it is broken or hostile. "x:tag" is Ollama's; "org/name" and
 * "org/name:QUANT" are looked for in the Hugging Face cache, then
 * llama.cpp's cache, LM Studio's folder, then Ollama's store. */
int localstore_find(const char *name, struct modelref *ref, char *err, size_t errlen);

/* Every model of every store; err is set for one that cannot be read. */
void localstore_list(int (*each)(const struct modelref *ref, const char *err, void *arg), void *arg);

/* Reads the model's headers, never leaving its store. */
int localstore_load(const struct modelref *ref, struct model_info *m, char *err, size_t errlen);

/* The model's file (or folder) as a path: ROOT/DIR/FILE. */
void localstore_path(const struct modelref *ref, char *out, size_t len);

/* "Ollama (DIR, DIR), Hugging Face cache (DIR), LM Studio (DIR)": where
 * vram looked, for messages. */
void localstore_where(char *out, size_t len);

#endif
