/* fithub: `vram fit ORG/REPO[:QUANT] --online`, a model of the Hugging
 * Face hub read before it is downloaded, as gguf-parser and the hub's own
 * pages read one: its file list (model/hubrepo.h), then only the headers
 * of the files that make the model, by range requests (cli/hubfetch.h):
 * a GGUF's metadata and tensor table, fetched further until its parser
 * reads no further; a safetensors file's length and JSON; config.json and
 * the shards' index whole. Each is written at its place in a file of its
 * true size in a cache folder, the weights left as holes (a sparse file),
 * which vram fit then reads as any local model: the same readers, the same
 * limits. The cache ($XDG_CACHE_HOME/vram/hub/ORG/REPO, else
 * ~/.cache/vram/hub/...) keeps each file under its blob id: looked at
 * again, only the list is fetched (and without the network, the list kept
 * last time is used, said so). */
#ifndef VRAM_CLI_FITHUB_H
#define VRAM_CLI_FITHUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fithub_model {
    char dir[1024];  /* the cache folder with the model's headers: for modelfile_load */
    char name[256];  /* "ORG/REPO:Q4_K_M", or "ORG/REPO" for safetensors */
    uint64_t bytes;  /* what its download takes */
    char note[300];  /* what to say of it ("offline: the list of ... kept on DATE"), or "" */
};

/* Whether arg reads as a hub name (ORG/REPO[:QUANT], hf.co/...). */
bool fithub_is_name(const char *arg);

/* The model arg names, its headers in the cache: 0, or an exit code's
 * error (VRAM_EINPUT: no such repository or quantization; VRAM_EFAIL: the
 * network, the cache) with err saying what and the fix. */
int fithub_fetch(const char *arg, struct fithub_model *out, char *err, size_t errlen);

#endif
