/* budget: what this process may hold on each GPU it uses: one group per
 * GPU, from VRAM_CAP_GROUP's files (each records its GPU's UUID) or made
 * privately from VRAM_CAP's sizes. A device ordinal is matched to its
 * group once, on first use (the driver may not be initialised when the
 * library loads); after that every charge finds it with one array load. */
#ifndef VRAM_SHIM_BUDGET_H
#define VRAM_SHIM_BUDGET_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/gpuspec.h"
#include "ipc/group.h"

#define BUDGET_MAX_DEVICES 64

struct budget {
    bool files;                 /* VRAM_CAP_GROUP's; else VRAM_CAP's sizes */
    unsigned n;                 /* files given */
    struct gpuspec_sizes sizes; /* VRAM_CAP, per device ordinal */
    /* files: in the order given; sizes: by device ordinal, made on first use */
    struct group slice[BUDGET_MAX_DEVICES];
    struct group *of[BUDGET_MAX_DEVICES]; /* a device ordinal's group; NULL: none */
    uint8_t known[BUDGET_MAX_DEVICES];    /* of[] is decided (read with acquire) */
    uint64_t told;                        /* devices whose refusal was explained */
    int8_t uuids_name_them; /* files: some visible device is some file's GPU (-1: not known) */
    pthread_mutex_t mu;
};

/* VRAM_CAP_GROUP=PATH[,PATH...]: every file must be a group this process
 * may join. 0, or -1 with the file and the reason in err. */
int budget_open_files(struct budget *b, const char *list, char *err, size_t len);

/* VRAM_CAP=SIZE (each device its own SIZE) or SIZE,SIZE,... (by device
 * ordinal). 0, or -1 with the reason in err. */
int budget_open_sizes(struct budget *b, const char *list, char *err, size_t len);

struct group *budget_resolve(struct budget *b, int dev);

/* The group that charges for device ordinal dev, or NULL when the process
 * has none there (its allocations there are refused). */
static inline struct group *budget_of(struct budget *b, int dev)
{
    if (dev < 0 || dev >= BUDGET_MAX_DEVICES)
        return NULL;
    if (__atomic_load_n(&b->known[dev], __ATOMIC_ACQUIRE))
        return b->of[dev];
    return budget_resolve(b, dev);
}

/* The group of the GPU with this UUID (as NVML names it), or NULL. */
struct group *budget_by_uuid(struct budget *b, const char *uuid);

/* Says on stderr, once per device, why its allocations are refused. */
void budget_refused(struct budget *b, int dev);

/* In a forked child, which is no member of its parent's groups. */
void budget_after_fork(struct budget *b);

/* The UUID of device ordinal dev as NVML writes it ("GPU-..."): 0, or -1
 * when the driver cannot say. */
int budget_device_uuid(int dev, char *out, size_t len);

#endif
