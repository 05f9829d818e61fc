/* fitplan: several models on the GPUs, first-fit decreasing: the biggest
 * model picks first, each takes the GPU with the most room left. Not
 * optimal bin packing, but predictable, and optimal for the usual one- and
 * two-GPU cases. */
#include "core/fitplan.h"

#include <string.h>

void fitplan_make(const uint64_t *need, size_t n, const uint64_t *room, size_t ngpus,
                  struct fitplan *plan)
{
    memset(plan, 0, sizeof *plan);
    size_t order[FITPLAN_MAX];
    n = n < FITPLAN_MAX ? n : FITPLAN_MAX;
    ngpus = ngpus < FITPLAN_MAX ? ngpus : FITPLAN_MAX;
    for (size_t i = 0; i < n; i++) {
        order[i] = i;
        plan->gpu_of[i] = -1;
    }
    for (size_t i = 1; i < n; i++) /* insertion sort, biggest first, stable */
        for (size_t j = i; j > 0 && need[order[j]] > need[order[j - 1]]; j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (size_t g = 0; g < ngpus; g++)
        plan->room_left[g] = room[g];
    for (size_t k = 0; k < n; k++) {
        size_t i = order[k];
        int best = -1;
        for (size_t g = 0; g < ngpus; g++)
            if (plan->room_left[g] >= need[i] &&
                (best < 0 || plan->room_left[g] > plan->room_left[best]))
                best = (int)g;
        if (best >= 0) {
            plan->gpu_of[i] = best;
            plan->room_left[best] -= need[i];
        }
    }
}

int fitplan_make_room(uint64_t need, uint64_t free, const struct fitplan_holder *h, size_t n,
                      bool *chosen)
{
    size_t order[FITPLAN_MAX];
    n = n < FITPLAN_MAX ? n : FITPLAN_MAX;
    for (size_t i = 0; i < n; i++) {
        chosen[i] = false;
        order[i] = i;
    }
    if (need <= free)
        return 0;
    for (size_t i = 1; i < n; i++) /* suspendable first, then the biggest */
        for (size_t j = i; j > 0; j--) {
            const struct fitplan_holder *a = &h[order[j]], *b = &h[order[j - 1]];
            if (a->suspendable < b->suspendable ||
                (a->suspendable == b->suspendable && a->bytes <= b->bytes))
                break;
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    uint64_t have = free;
    size_t k = 0;
    while (k < n && have < need) {
        chosen[order[k]] = true;
        have += h[order[k++]].bytes;
    }
    if (have < need)
        return -1;
    int count = (int)k;
    for (size_t i = k; i-- > 0;) /* drop what turned out not to be needed */
        if (have - h[order[i]].bytes >= need) {
            chosen[order[i]] = false;
            have -= h[order[i]].bytes;
            count--;
        }
    return count;
}
