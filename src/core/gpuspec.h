/* gpuspec: which GPUs and how much of each, as users type them: `vram run
 * --gpus 2` or `--gpus 0,1`, `--vram 20G` or `--vram 0:20G,1:10G`, and
 * libvramcap's VRAM_CAP=20G or VRAM_CAP=20G,10G. Pure parsing; what the
 * names mean (an index, a UUID) is for the caller to resolve. */
#ifndef VRAM_CORE_GPUSPEC_H
#define VRAM_CORE_GPUSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GPUSPEC_MAX  64  /* GPUs in one list */
#define GPUSPEC_NAME 100 /* a name's length: an index, or a UUID (or its prefix) */

/* "2" (any two GPUs) or "0,1" / "GPU-3f1c2a9e,3" (those, in that order). */
struct gpuspec_gpus {
    unsigned count;                       /* how many GPUs */
    bool named;                           /* which ones: name[0..count) */
    char name[GPUSPEC_MAX][GPUSPEC_NAME]; /* as typed, blanks trimmed */
};

/* 0, or -1 for an empty list, an empty or overlong name, a count of 0 or
 * over GPUSPEC_MAX, or more than GPUSPEC_MAX names. Names are not checked
 * against each other (two names may be the same GPU: resolve, then check). */
int gpuspec_parse_gpus(const char *s, struct gpuspec_gpus *out);

/* "20G" (one size for every GPU), "20G,10G" (by position), or
 * "0:20G,1:10G" (by GPU index; keyed). */
struct gpuspec_sizes {
    unsigned n;
    bool keyed;
    unsigned key[GPUSPEC_MAX]; /* keyed: the GPU index of size[i], each once */
    uint64_t size[GPUSPEC_MAX];
};

/* 0, or -1 for anything else: a size of 0 or that units_parse_size cannot
 * read, keyed and positional entries mixed, an index twice or of
 * GPUSPEC_MAX or more, more than GPUSPEC_MAX entries. */
int gpuspec_parse_sizes(const char *s, struct gpuspec_sizes *out);

/* Whether the list is one size for every GPU. */
static inline bool gpuspec_uniform(const struct gpuspec_sizes *z)
{
    return z->n == 1 && !z->keyed;
}

/* The size for GPU index gpu at position pos of its list: the one size, the
 * pos-th, or the one keyed gpu; 0 when the list has none for it. */
uint64_t gpuspec_size_for(const struct gpuspec_sizes *z, unsigned pos, unsigned gpu);

/* "0,1" for the keys of a keyed list, in the order given. */
void gpuspec_fmt_keys(const struct gpuspec_sizes *z, char *out, size_t len);

#endif
