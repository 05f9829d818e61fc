/* addrmap: addresses to pointers (see addrmap.h). */
#include "shim/addrmap.h"

#include <stdlib.h>

static size_t slot_of(uint64_t key, size_t cap)
{
    /* pool blocks are 512-byte aligned: the low bits say nothing */
    return (size_t)(((key >> 9) * 0x9e3779b97f4a7c15ULL) >> 7) & (cap - 1);
}

static void place(struct addrmap *m, uint64_t key, void *v)
{
    size_t i = slot_of(key, m->cap);
    while (m->s[i].key > 1)
        i = (i + 1) & (m->cap - 1);
    if (m->s[i].key == 0)
        m->used++;
    m->s[i] = (struct addrmap_slot){key, v};
}

/* Twice as large (or as large, to drop deleted slots), all rehashed. */
static int regrow(struct addrmap *m, size_t live)
{
    size_t nc = m->cap ? m->cap : 1024;
    while (live * 2 >= nc)
        nc *= 2;
    struct addrmap_slot *old = m->s, *ns = calloc(nc, sizeof *ns);
    size_t oc = m->cap;
    if (!ns)
        return -1;
    m->s = ns;
    m->cap = nc;
    m->used = 0;
    for (size_t i = 0; i < oc; i++)
        if (old[i].key > 1)
            place(m, old[i].key, old[i].v);
    free(old);
    return 0;
}

int addrmap_put(struct addrmap *m, uint64_t key, void *v)
{
    if ((m->used + 1) * 4 > m->cap * 3) {
        size_t live = 0;
        for (size_t i = 0; i < m->cap; i++)
            live += m->s[i].key > 1;
        if (regrow(m, live + 1) < 0)
            return -1;
    }
    place(m, key, v);
    return 0;
}

void *addrmap_get(struct addrmap *m, uint64_t key, int take)
{
    if (!m->cap || key <= 1)
        return NULL;
    for (size_t i = slot_of(key, m->cap); m->s[i].key; i = (i + 1) & (m->cap - 1))
        if (m->s[i].key == key) {
            if (take)
                m->s[i].key = 1;
            return m->s[i].v;
        }
    return NULL;
}

void addrmap_forget(struct addrmap *m)
{
    m->s = NULL;
    m->cap = m->used = 0;
}
