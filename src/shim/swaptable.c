/* swaptable: a plain array searched linearly. Allocators cache what they get
 * (PyTorch, JAX and CuPy call the driver a few hundred times for a whole
 * model), so a scan of a few hundred entries per call costs less than the
 * driver call it accompanies, and the table stays easy to walk for a swap. */
#include "shim/swaptable.h"

#include <stdlib.h>
#include <string.h>

void swaptable_init(struct swaptable *t)
{
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->mu, NULL);
}

void swaptable_clear(struct swaptable *t)
{
    free(t->v);
    free(t->res);
    t->v = NULL;
    t->res = NULL;
    t->n = t->cap = t->nres = t->capres = 0;
    memset(t->block, 0, sizeof t->block);
}

/* The array v of n elements with room for one more (capacity *cap,
 * doubling from first), or NULL with v and *cap as they were. */
static void *grow(void *v, unsigned n, unsigned *cap, size_t size, unsigned first)
{
    if (n < *cap)
        return v;
    unsigned nc = *cap ? *cap * 2 : first;
    void *nv = realloc(v, (size_t)nc * size);
    if (nv)
        *cap = nc;
    return nv;
}

int swaptable_add(struct swaptable *t, const struct swaptable_entry *p)
{
    struct swaptable_entry *v = grow(t->v, t->n, &t->cap, sizeof *v, 64);
    if (!v)
        return -1;
    t->v = v;
    t->v[t->n++] = *p;
    return 0;
}

struct swaptable_entry *swaptable_by_id(struct swaptable *t, uint64_t id)
{
    for (unsigned i = 0; i < t->n; i++)
        if (t->v[i].id == id)
            return &t->v[i];
    return NULL;
}

struct swaptable_entry *swaptable_by_real(struct swaptable *t, uint64_t real)
{
    for (unsigned i = 0; i < t->n; i++)
        if (t->v[i].real == real)
            return &t->v[i];
    return NULL;
}

struct swaptable_entry *swaptable_by_va(struct swaptable *t, uint64_t va)
{
    for (unsigned i = 0; va && i < t->n; i++)
        if (t->v[i].va == va)
            return &t->v[i];
    return NULL;
}

void swaptable_remove(struct swaptable *t, struct swaptable_entry *p)
{
    *p = t->v[--t->n];
}

uint64_t swaptable_real_of(struct swaptable *t, uint64_t id)
{
    struct swaptable_entry *p = swaptable_by_id(t, id);
    return p ? p->real : id;
}

uint64_t swaptable_new_id(struct swaptable *t)
{
    return 0x7672616d00000000ULL | (++t->next_id & 0xffffffffULL);
}

int swaptable_res_add(struct swaptable *t, uint64_t start, uint64_t size)
{
    struct swaptable_res *r = grow(t->res, t->nres, &t->capres, sizeof *r, 16);
    if (!r)
        return -1;
    t->res = r;
    t->res[t->nres++] = (struct swaptable_res){start, size};
    return 0;
}

void swaptable_res_del(struct swaptable *t, uint64_t start)
{
    for (unsigned i = 0; i < t->nres; i++)
        if (t->res[i].start == start) {
            t->res[i] = t->res[--t->nres];
            return;
        }
}

long swaptable_res_of(const struct swaptable *t, uint64_t va)
{
    for (unsigned i = 0; i < t->nres; i++)
        if (va >= t->res[i].start && va - t->res[i].start < t->res[i].size)
            return (long)i;
    return -1;
}
