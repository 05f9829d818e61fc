/* fitplan: several models on the machine's GPUs: which live together on
 * which GPU, and which must take turns. Pure. */
#ifndef VRAM_CORE_FITPLAN_H
#define VRAM_CORE_FITPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FITPLAN_MAX 64

struct fitplan {
    int gpu_of[FITPLAN_MAX]; /* GPU index for each model, -1: must take turns */
    uint64_t room_left[FITPLAN_MAX];
};

/* need[i]: model i's total; room[g]: GPU g's free memory. Biggest models
 * first, each on the GPU with the most room left. */
void fitplan_make(const uint64_t *need, size_t nmodels, const uint64_t *room, size_t ngpus,
                  struct fitplan *plan);

/* Something holding memory on a GPU: a process, or a model vram serve can
 * suspend to host RAM. */
struct fitplan_holder {
    uint64_t bytes;
    bool suspendable;
};

/* Which holders to free so that need fits where free is left: suspendable
 * ones before the others, the biggest first, then any not needed after all
 * dropped again. Marks them in chosen; returns how many (0: it fits now),
 * or -1 when freeing them all would not be enough. */
int fitplan_make_room(uint64_t need, uint64_t free, const struct fitplan_holder *h, size_t n,
                      bool *chosen);

#endif
