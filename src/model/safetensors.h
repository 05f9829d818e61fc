/* safetensors: the header of a .safetensors file (the dtype and shape of
 * every tensor) and of a folder of shards, read without the weights. */
#ifndef VRAM_MODEL_SAFETENSORS_H
#define VRAM_MODEL_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "core/model.h"
#include "model/modeldir.h"
#include "model/reader.h"

#define SAFETENSORS_MAX_HEADER (100ULL << 20)  /* one file's: the format's own limit */
#define SAFETENSORS_MAX_HEADERS (256ULL << 20) /* all shards' together */
#define SAFETENSORS_MAX_INDEX (64ULL << 20)    /* model.safetensors.index.json */
#define SAFETENSORS_MAX_SHARDS 4096

struct safetensors_summary {
    uint64_t tensors, params, bytes;
    uint64_t bytes_by_dtype[16];
    unsigned max_layer;              /* highest N in "...layers.N." + 1 */
    uint64_t embed_rows, embed_cols; /* the token embedding's shape */
    uint64_t header_bytes;           /* the headers read so far */
};

/* Reads one file's header and adds it to s. VRAM_EINPUT with the file and
 * the problem in err for anything malformed. */
int safetensors_parse(struct reader *r, const char *name, struct safetensors_summary *s, char *err,
                      size_t errlen);

/* The same with another limit on the header (the fuzzer's, to reach it). */
int safetensors_parse_max(struct reader *r, const char *name, uint64_t max_header,
                          struct safetensors_summary *s, char *err, size_t errlen);

/* One .safetensors file of folder d (file), or the folder's shards (file
 * NULL: those model.safetensors.index.json names, else every *.safetensors),
 * with the folder's config.json when there is one. */
int safetensors_load(const struct modeldir *d, const char *file, struct model_info *m, char *err,
                     size_t errlen);

#endif
