/* ggufset: the GGUF models in one folder (a Hugging Face repository's
 * snapshot, an LM Studio repository, a folder of the user's): each file
 * with its quantization tag and its bytes (every part of a split model),
 * one picked by tag (REPO:Q4_K_M, as llama.cpp's -hf and Ollama's hf.co
 * names choose), and the list said in a message when a folder holds
 * several and none was named. */
#ifndef VRAM_MODEL_GGUFSET_H
#define VRAM_MODEL_GGUFSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/ggufname.h"
#include "model/modeldir.h"

#define GGUFSET_MAX 256

struct ggufset_file {
    char path[256]; /* relative to the folder: "X-Q4_K_M.gguf", "Q8_0/X-Q8_0-00001-of-00002.gguf" */
    struct ggufname name;
    uint64_t bytes;  /* all its parts */
    bool tag_unique; /* no other file of the set has its quant */
};

struct ggufset {
    struct ggufset_file files[GGUFSET_MAX];
    size_t n;
    size_t more; /* models past GGUFSET_MAX, not kept */
};

/* The models in d and in its folders one level down (big quants are kept
 * in a folder of their own); projectors and the later parts of split
 * models aside. 0, or VRAM_EINPUT when d cannot be listed. */
int ggufset_read(const struct modeldir *d, struct ggufset *s, char *err, size_t errlen);

/* The index of the one file answering to tag (ggufname_matches); -1 when
 * none does, -2 when several. */
int ggufset_pick(const struct ggufset *s, const char *tag);

/* A name's ":TAG" after its last '/', for REPO:QUANT: base and tag, true;
 * false (base is the name) when it has none. */
bool ggufset_split_tag(const char *name, char *base, size_t blen, char *tag, size_t tlen);

/* The name a store gives file i of a repository named repo: "REPO:QUANT"
 * when its tag is its own, else "REPO/PATH". */
void ggufset_model_name(const struct ggufset *s, size_t i, const char *repo, char *out, size_t len);

/* "REPO:Q4_K_M (4.36 GiB), REPO:Q8_0 (7.54 GiB)": every model for a
 * message; with repo NULL, the files' paths under dir. */
void ggufset_describe(const struct ggufset *s, const char *repo, const char *dir, char *out,
                      size_t len);

#endif
