/* safetensors: the header of a .safetensors file (the dtype and shape of
 * every tensor) and of a directory of shards, read without the weights. */
#ifndef VRAM_MODEL_SAFETENSORS_H
#define VRAM_MODEL_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "core/model.h"
#include "model/reader.h"

struct safetensors_summary {
    uint64_t tensors, params, bytes;
    uint64_t bytes_by_dtype[16];
    unsigned max_layer;              /* highest N in "...layers.N." + 1 */
    uint64_t embed_rows, embed_cols; /* the token embedding's shape */
};

/* Reads one file's header and adds it to s. VRAM_EINPUT with the file and
 * the problem in err for anything malformed. */
int safetensors_parse(struct reader *r, const char *name, struct safetensors_summary *s, char *err,
                      size_t errlen);

/* A .safetensors file, or a directory (with model.safetensors.index.json,
 * or its *.safetensors files), with its config.json when there is one. */
int safetensors_load(const char *path, struct model_info *m, char *err, size_t errlen);

#endif
