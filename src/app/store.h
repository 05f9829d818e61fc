/* store: what `vram serve` keeps across restarts, in SQLite: every event
 * with its timing, each model's measured footprint per GPU kind (for
 * vram = auto), and the model processes it runs (for re-adoption). */
#ifndef VRAM_APP_STORE_H
#define VRAM_APP_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "core/modelname.h"

struct store;

struct store_proc {
    char model[MODELNAME_MAX];
    int pid;
    uint64_t start; /* start time in clock ticks, against pid reuse */
    char state[16]; /* "ready", "suspended" */
    int gpu;
    unsigned port;
    uint64_t bytes; /* on the GPU, or in host RAM when suspended */
    char how[16];   /* how it was last suspended: "checkpoint" */
    uint32_t gpus;  /* all its GPUs, a bit each (gpu is the first); 0: gpu alone */
};

int store_open(struct store **out, const char *path, char *err, size_t len);
void store_close(struct store *s);

/* The store of a `vram serve` for reading only (vram fit): NULL when it is
 * not there or not readable, or its file is not a regular file owned by the
 * caller or root (another user's store is not trusted). */
struct store *store_open_readonly(const char *path);

void store_event(struct store *s, uint64_t t_ms, const char *model, const char *kind,
                 double seconds, const char *detail);

/* The footprint measured last time on this kind of GPU; 0 if none. */
uint64_t store_footprint(struct store *s, const char *model, const char *gpu_name);
void store_set_footprint(struct store *s, const char *model, const char *gpu_name, uint64_t bytes);

void store_put_proc(struct store *s, const struct store_proc *p);
void store_del_proc(struct store *s, const char *model);
/* Up to max recorded processes; how many. */
size_t store_procs(struct store *s, struct store_proc *out, size_t max);

#endif
