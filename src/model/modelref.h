/* modelref: a model found in a local store (Ollama's, the Hugging Face
 * cache, LM Studio's folder): its name there, and where its files are,
 * beneath a root nothing outside of is read. */
#ifndef VRAM_MODEL_MODELREF_H
#define VRAM_MODEL_MODELREF_H

#include <stdbool.h>
#include <stdint.h>

#define MODELREF_PATH 1024

struct modelref {
    char name[256];              /* as the store names it: "llama3.1:8b" */
    const char *store;           /* "ollama", "huggingface", "lmstudio" */
    char root[MODELREF_PATH];    /* the store's folder */
    char dir[MODELREF_PATH];     /* the model's folder, relative to root */
    char file[256];              /* its file there; "" for the folder */
    uint64_t disk;               /* bytes on disk */
    bool gguf;                   /* llama.cpp's format: run by llama.cpp */
};

#endif
