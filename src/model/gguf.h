/* gguf: the metadata and tensor table of a GGUF (v2, v3) file, read without
 * the weights: every ggml tensor type with its true bytes per block. */
#ifndef VRAM_MODEL_GGUF_H
#define VRAM_MODEL_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "core/model.h"
#include "model/reader.h"

/* Bytes of n elements of ggml type t, or -1 for an unknown type or an n
 * that is not a whole number of blocks. */
int64_t gguf_type_bytes(uint32_t t, uint64_t n);
const char *gguf_type_name(uint32_t t);
/* A file type's name (general.file_type 15: "Q4_K_M"), or NULL for one
 * llama.cpp does not (or no longer) know. */
const char *gguf_ftype_name(uint64_t t);

/* The header (metadata and tensor table) may not run past this: real ones
 * are under 32 MiB; a longer one is refused rather than walked. */
#define GGUF_MAX_HEADER (128ULL << 20)

int gguf_parse(struct reader *r, const char *name, struct model_info *m, char *err, size_t errlen);
/* The same with another limit on the header (the fuzzer's, to reach it). */
int gguf_parse_max(struct reader *r, const char *name, uint64_t max_header, struct model_info *m,
                   char *err, size_t errlen);
int gguf_load(const char *path, struct model_info *m, char *err, size_t errlen);

#endif
