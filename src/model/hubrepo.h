/* hubrepo: a model repository of the Hugging Face hub as its API lists
 * it (GET /api/models/ORG/REPO/tree/main?recursive=true: each file's path,
 * size and blob id), and which of its files vram fit reads for a model
 * named ORG/REPO[:QUANT]: the GGUF of that quantization (every part of a
 * split one; Q4_K_M when none is named, as Ollama's hf.co names choose),
 * else the safetensors shards with their index and config.json, else the
 * config.json alone. The listing is another party's: every path is
 * checked to be a plain relative name (no "..", no hidden or odd names, at
 * most one folder down) before anything is named after it. */
#ifndef VRAM_MODEL_HUBREPO_H
#define VRAM_MODEL_HUBREPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HUBREPO_MAX_FILES 4096
#define HUBREPO_MAX_TREE  (16u << 20) /* a listing larger than this is refused */
#define HUBREPO_NAME_MAX  96          /* an org's or a repo's name */

struct hubrepo_file {
    char path[256];
    uint64_t size;
    char oid[72]; /* the blob's id (its LFS sha256, else git's): what the cache keys on */
};

struct hubrepo {
    struct hubrepo_file *files; /* malloc'd */
    size_t n;
    size_t skipped; /* entries left out: folders, odd paths, past HUBREPO_MAX_FILES */
};

/* What a name names: "org/repo" or "org/repo:QUANT", also after "hf.co/",
 * "huggingface.co/" or "https://huggingface.co/". false when it is not
 * such a name (a path, one word, odd characters). */
bool hubrepo_name(const char *arg, char org[HUBREPO_NAME_MAX], char repo[HUBREPO_NAME_MAX],
                  char tag[32]);

/* The listing (text, n bytes: a JSON array) into h. 0, or -1 with err. */
int hubrepo_parse(const char *text, size_t n, struct hubrepo *h, char *err, size_t errlen);
void hubrepo_free(struct hubrepo *h);

/* How a file is read. */
enum hubrepo_how {
    HUBREPO_WHOLE,       /* config.json, the shards' index: small, read whole */
    HUBREPO_GGUF,        /* a GGUF's header: as far as its metadata and tensor table go */
    HUBREPO_SAFETENSORS, /* a .safetensors file's header: its length, then the JSON */
};

#define HUBREPO_MAX_PICK 512

struct hubrepo_pick {
    size_t file[HUBREPO_MAX_PICK]; /* indexes into the listing */
    enum hubrepo_how how[HUBREPO_MAX_PICK];
    size_t n;
    char quant[32];   /* the GGUF's quantization ("Q4_K_M"); "" for safetensors */
    uint64_t bytes;   /* what a download of the model takes */
};

/* The files of h (the repository named repo, "ORG/REPO", for messages)
 * to read for the model tag names (NULL or "": Q4_K_M, or
 * the repository's only GGUF model; a repository without GGUF files has
 * one model). 0, or -1 with err: no such quantization (the ones there are
 * listed), several, nothing vram reads. */
int hubrepo_pick(const struct hubrepo *h, const char *repo, const char *tag,
                 struct hubrepo_pick *p, char *err, size_t errlen);

#endif
