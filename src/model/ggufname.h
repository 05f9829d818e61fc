/* ggufname: what a GGUF file's name says, as the people who publish them
 * name them: the quantization it is stored in ("Qwen2.5-7B-Instruct-Q4_K_M
 * .gguf": Q4_K_M, the tag llama.cpp's -hf REPO:QUANT and Ollama's hf.co
 * names choose it by), whether it is one part of a model split over
 * several files (-00001-of-00003), and whether it is a model at all (an
 * mmproj projector is not). Names only; nothing is opened. */
#ifndef VRAM_MODEL_GGUFNAME_H
#define VRAM_MODEL_GGUFNAME_H

#include <stdbool.h>
#include <stddef.h>

struct ggufname {
    char quant[32]; /* "Q4_K_M", upper case; "" when the name says none */
    unsigned part, parts; /* -0000P-of-0000N: P and N; 1 and 1 for a whole file */
};

/* Whether name (a file name, no folder) is a GGUF model file: ends in
 * .gguf, is not a projector (mmproj*), and is the first part when split. */
bool ggufname_is_model(const char *name);

/* What name says; false when it is not a .gguf name. */
bool ggufname_parse(const char *name, struct ggufname *out);

/* Whether the file name answers to tag (case-insensitive): its quant, or
 * a run of its name between separators ("UD-Q4_K_XL" for unsloth's). */
bool ggufname_matches(const char *name, const char *tag);

#endif
