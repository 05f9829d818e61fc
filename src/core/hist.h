/* hist: a histogram of durations, as Prometheus reads one, with the
 * daemon's buckets (5 ms to 5 min): a request's time to its first byte and
 * to its end, a model's start, suspend and resume. */
#ifndef VRAM_CORE_HIST_H
#define VRAM_CORE_HIST_H

#include <stdint.h>

#define HIST_BUCKETS 15 /* and +Inf */

struct hist {
    uint64_t in[HIST_BUCKETS + 1]; /* observations in each bucket, not cumulative */
    uint64_t count;
    double sum;
};

/* The upper bounds, in seconds (the last bucket's, +Inf, is not here). */
extern const double hist_le[HIST_BUCKETS];

void hist_observe(struct hist *h, double seconds);

#endif
