/* place: which GPU a job goes to. The most room wins, so that jobs spread
 * and the biggest hole stays for the biggest job to come. */
#include "core/place.h"

#include <stdbool.h>

int place_best(const uint64_t *room, size_t n, uint64_t size)
{
    int best = -1;
    for (size_t i = 0; i < n; i++)
        if (room[i] >= size && (best < 0 || room[i] > room[best]))
            best = (int)i;
    return best;
}

int place_best_n(const uint64_t *room, size_t n, uint64_t size, unsigned k, unsigned *out)
{
    if (k == 0 || k > n)
        return -1;
    /* k passes over n: a job spans a handful of GPUs, a machine has dozens */
    unsigned got = 0;
    for (; got < k; got++) {
        int best = -1;
        for (size_t i = 0; i < n; i++) {
            bool taken = false;
            for (unsigned j = 0; j < got && !taken; j++)
                taken = out[j] == i;
            if (!taken && room[i] >= size && (best < 0 || room[i] > room[best]))
                best = (int)i;
        }
        if (best < 0)
            return -1;
        out[got] = (unsigned)best;
    }
    for (unsigned i = 1; i < k; i++) /* index order: insertion sort of a few */
        for (unsigned j = i; j > 0 && out[j - 1] > out[j]; j--) {
            unsigned t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return (int)k;
}

uint64_t place_room(uint64_t free, uint64_t promised)
{
    return free > promised ? free - promised : 0;
}
