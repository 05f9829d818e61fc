/* schedroom: the scheduler's arithmetic of room (core/sched.c decides,
 * this counts): which GPUs a model is on, what a GPU has left for one
 * more model now and once what is leaving has left, the host memory
 * suspended models hold, and the places max_loaded allows. */
#ifndef VRAM_CORE_SCHEDROOM_H
#define VRAM_CORE_SCHEDROOM_H

#include <stdbool.h>
#include <stdint.h>

#include "core/sched.h"

/* m is placed on GPU g (its mask). */
bool schedroom_on(const struct sched_model *m, int g);
/* The lowest GPU of mask, or -1. */
int schedroom_first(uint32_t mask);
/* m holds, or is about to hold, its memory on its GPUs. */
bool schedroom_on_gpu(const struct sched_model *m);
/* What a model may still take on g: the GPU's free memory after everyone,
 * and the models' budget after the models, less what this step claimed. */
uint64_t schedroom_room(const struct sched *s, int g);
/* Memory on g that models on their way out will give back. */
uint64_t schedroom_coming(const struct sched *s, int g);
/* What g will have for one more model once what is leaving has left:
 * negative when promised already. */
int64_t schedroom_avail(const struct sched *s, int g);
/* Host memory the suspended (and suspending, resuming) models hold. */
uint64_t schedroom_host_used(const struct sched *s);
/* m is loaded and holds its place (one on its way out gave it back). */
bool schedroom_holds_place(const struct sched_model *m);
/* g (g < 0: the machine) has a place for one more model under
 * max_loaded, with the places promised during this step. */
bool schedroom_has_place(const struct sched *s, int g);

#endif
