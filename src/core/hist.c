/* hist: durations into buckets. Observed once per proxied request: a
 * short scan of fifteen bounds, no allocation. */
#include "core/hist.h"

const double hist_le[HIST_BUCKETS] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                      2.5,   5,    10,    30,   60,  120,  300};

void hist_observe(struct hist *h, double seconds)
{
    unsigned b = 0;
    while (b < HIST_BUCKETS && seconds > hist_le[b])
        b++;
    h->in[b]++;
    h->count++;
    h->sum += seconds;
}
