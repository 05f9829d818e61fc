/* place: which GPU a job goes to. Pure: the room on each GPU in, a choice
 * out. */
#ifndef VRAM_CORE_PLACE_H
#define VRAM_CORE_PLACE_H

#include <stddef.h>
#include <stdint.h>

/* The GPU with the most room that can hold size (ties: the lowest index),
 * or -1 when none can. */
int place_best(const uint64_t *room, size_t n, uint64_t size);

/* The k GPUs with the most room that can each hold size (ties: the lowest
 * indexes), into out in index order: k, or -1 when fewer than k can. */
int place_best_n(const uint64_t *room, size_t n, uint64_t size, unsigned k, unsigned *out);

/* Room on a GPU: free memory, less what slices already promised to running
 * jobs have not yet taken (a slice is a reservation). */
uint64_t place_room(uint64_t free, uint64_t promised);

#endif
