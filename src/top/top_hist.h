/* top_hist: each GPU's recent figures for top's small graphs, one sample a
 * refresh, oldest first in a ring: used memory, utilization, memory
 * bandwidth, power against its limit. */
#ifndef VRAM_TOP_TOP_HIST_H
#define VRAM_TOP_TOP_HIST_H

#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"

#define TOP_HISTORY 240
#define TOP_HIST_NONE UINT16_MAX /* no figure then (the driver gave none) */

enum top_series { TOP_H_MEMORY, TOP_H_UTIL, TOP_H_MBW, TOP_H_POWER, TOP_H_COUNT };

struct top_hist {
    size_t ngpus, pos, filled;
    uint16_t *v; /* [gpu][series][TOP_HISTORY], permille */
};

/* Adds one sample of every GPU of s (the first call sizes the ring). */
void top_hist_record(struct top_hist *h, const struct snap *s);

/* The last w samples of a series, oldest first, into out (permille, or
 * TOP_HIST_NONE where none was taken yet): w at most TOP_HISTORY. */
void top_hist_last(const struct top_hist *h, size_t gpu, enum top_series which, int w,
                   uint16_t *out);

void top_hist_free(struct top_hist *h);

#endif
