/* llamacache: llama.cpp's own download cache (what `llama-server -hf
 * REPO:QUANT` fetched). Two layouts: the one llama.cpp wrote until late
 * 2025, flat files in one folder (OWNER_REPO_FILE.gguf beside
 * manifest=OWNER=REPO=TAG.json), and the Hugging Face cache's layout it
 * writes now when LLAMA_CACHE names a folder (models--OWNER--REPO/...;
 * without LLAMA_CACHE it writes into the Hugging Face cache itself, which
 * model/hfcache.c reads). Models are named as llama.cpp's -hf names them:
 * "bartowski/Qwen2.5-7B-Instruct-GGUF:Q4_K_M". */
#ifndef VRAM_MODEL_LLAMACACHE_H
#define VRAM_MODEL_LLAMACACHE_H

#include <stddef.h>

#include "model/modelref.h"

/* $LLAMA_CACHE, else $XDG_CACHE_HOME/llama.cpp, else ~/.cache/llama.cpp. */
size_t llamacache_roots(char roots[][MODELREF_PATH], size_t max);

/* "OWNER/REPO:QUANT", "OWNER/REPO" (its one model), or a file's name
 * without .gguf (one fetched by URL): as hfcache_find. */
int llamacache_find(const char *root, const char *name, struct modelref *ref, char *err,
                    size_t errlen);

/* Every model of the cache, as ollama_list. */
int llamacache_list(const char *root,
                    int (*each)(const struct modelref *ref, const char *err, void *arg), void *arg);

#endif
