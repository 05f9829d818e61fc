/* demand: the table of waiting demands. Small and unordered: an answer
 * swaps the last entry into the hole. */
#include "daemon/demand.h"

#include <stdio.h>

uint64_t demand_add(struct demands *t, const struct demand_ops *ops, void *arg)
{
    if (t->n == DEMAND_MAX)
        return 0;
    struct demand *d = &t->v[t->n++];
    d->id = ++t->last_id;
    d->ops = ops;
    d->arg = arg;
    d->who[0] = '\0';
    return d->id;
}

void demand_set_who(struct demands *t, uint64_t id, const char *who)
{
    for (size_t k = 0; k < t->n; k++)
        if (t->v[k].id == id) {
            snprintf(t->v[k].who, sizeof t->v[k].who, "%s", who ? who : "");
            return;
        }
}

const char *demand_who(const struct demands *t, uint64_t id)
{
    for (size_t k = 0; k < t->n; k++)
        if (t->v[k].id == id)
            return t->v[k].who;
    return NULL;
}

bool demand_take(struct demands *t, uint64_t id, struct demand *out)
{
    for (size_t k = 0; k < t->n; k++) {
        if (t->v[k].id != id)
            continue;
        *out = t->v[k];
        t->v[k] = t->v[--t->n];
        return true;
    }
    return false;
}
