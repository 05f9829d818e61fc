/* place: which GPU a job goes to. The most room wins, so that jobs spread
 * and the biggest hole stays for the biggest job to come. */
#include "core/place.h"

int place_best(const uint64_t *room, size_t n, uint64_t size)
{
    int best = -1;
    for (size_t i = 0; i < n; i++)
        if (room[i] >= size && (best < 0 || room[i] > room[best]))
            best = (int)i;
    return best;
}

uint64_t place_room(uint64_t free, uint64_t promised)
{
    return free > promised ? free - promised : 0;
}
