/* fitplan: several models on the machine's GPUs: which live together on
 * which GPU, and which must take turns. Pure. */
#ifndef VRAM_CORE_FITPLAN_H
#define VRAM_CORE_FITPLAN_H

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

#endif
