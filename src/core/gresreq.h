/* gresreq: the GPU memory a Slurm job asked for, from its GRES as
 * slurmctld keeps them: a request per node ("gres:gpu:1,gres:vram:6G",
 * "gres/vram:gpu1:512M") or an allocation ("vram:6442450944"). vram's
 * memory is the count GRES "vram" (docs/slurm.md), typed "gpuN" where a
 * node has one entry per GPU. Pure parsing: what the SPANK plugin reads
 * to cap a job that asked --gres=vram:SIZE without --vram. */
#ifndef VRAM_CORE_GRESREQ_H
#define VRAM_CORE_GRESREQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GRESREQ_TYPE_MAX 64

struct gresreq {
    bool found;                   /* the list names the GRES */
    uint64_t count;               /* its count: bytes, for vram */
    char type[GRESREQ_TYPE_MAX];  /* its type ("gpu1"), "" for none */
};

/* The GRES name in the comma-separated list s (each entry
 * [gres:|gres/]NAME[:TYPE][:COUNT], COUNT a whole number with an optional
 * K, M, G, T or P, powers of 1024, as Slurm reads them; 1 when left out).
 * 0 (out->found says whether it is there; the counts of several entries
 * of that name add up, and their type is kept only when they agree), or
 * -1 when an entry of that name is not one of those forms, or its counts
 * overflow. */
int gresreq_parse(const char *s, const char *name, struct gresreq *out);

/* A Slurm count ("6G", "6442450944"): 0, or -1. */
int gresreq_count(const char *s, size_t len, uint64_t *out);

/* The GPU index a type names ("gpu1": 1), or -1 for any other type. */
int gresreq_gpu_of(const char *type);

#endif
