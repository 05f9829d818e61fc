/* allocs: every live allocation libvramcap counted, in an open-addressing
 * hash table (linear probing, deleted-slot markers, grown at half full), so
 * an allocation or a free costs one hash and a probe or two whatever the
 * number of allocations. */
#include "shim/allocs.h"

#include <stdlib.h>
#include <string.h>

#define DELETED 0xff

static uint64_t mix(uint64_t key, unsigned kind)
{
    uint64_t x = key ^ ((uint64_t)kind << 56);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

void allocs_init(struct allocs *t)
{
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->mu, NULL);
}

void allocs_free(struct allocs *t)
{
    free(t->v);
    t->v = NULL;
    t->cap = t->used = t->live = 0;
}

/* The slot holding (key, kind), or -1. Lock held. */
static long find(const struct allocs *t, uint64_t key, unsigned kind)
{
    if (!t->cap)
        return -1;
    size_t mask = t->cap - 1;
    for (size_t i = mix(key, kind) & mask, n = 0; n < t->cap; i = (i + 1) & mask, n++) {
        const struct allocs_entry *e = &t->v[i];
        if (e->kind == 0)
            return -1;
        if (e->kind == kind && e->key == key)
            return (long)i;
    }
    return -1;
}

static void insert(struct allocs_entry *v, size_t cap, const struct allocs_entry *e)
{
    size_t mask = cap - 1;
    size_t i = mix(e->key, e->kind) & mask;
    while (v[i].kind != 0 && v[i].kind != DELETED)
        i = (i + 1) & mask;
    v[i] = *e;
}

static int grow(struct allocs *t)
{
    /* half full of live entries: double; mostly deleted slots: rehash in place */
    size_t cap = t->cap == 0 ? 256 : t->live * 4 < t->cap ? t->cap : t->cap * 2;
    struct allocs_entry *v = calloc(cap, sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < t->cap; i++)
        if (t->v[i].kind != 0 && t->v[i].kind != DELETED)
            insert(v, cap, &t->v[i]);
    free(t->v);
    t->v = v;
    t->cap = cap;
    t->used = t->live;
    return 0;
}

int allocs_put(struct allocs *t, uint64_t key, enum allocs_kind kind, uint64_t bytes, int dev)
{
    pthread_mutex_lock(&t->mu);
    int rc = 0;
    long at = find(t, key, kind);
    if (at >= 0) {
        t->bytes[kind] -= t->v[at].bytes;
        t->v[at].bytes = bytes;
        t->v[at].dev = (int8_t)dev;
        t->bytes[kind] += bytes;
        goto out;
    }
    if ((t->used + 1) * 2 > t->cap && grow(t) < 0) {
        rc = -1;
        goto out;
    }
    struct allocs_entry e = {key, bytes, (uint8_t)kind, (int8_t)dev, 0, 0};
    size_t mask = t->cap - 1;
    size_t i = mix(key, kind) & mask;
    while (t->v[i].kind != 0 && t->v[i].kind != DELETED)
        i = (i + 1) & mask;
    if (t->v[i].kind == 0)
        t->used++;
    t->v[i] = e;
    t->live++;
    t->bytes[kind] += bytes;
out:
    pthread_mutex_unlock(&t->mu);
    return rc;
}

int allocs_take(struct allocs *t, uint64_t key, enum allocs_kind kind, struct allocs_entry *out)
{
    pthread_mutex_lock(&t->mu);
    long at = find(t, key, kind);
    if (at >= 0) {
        if (out)
            *out = t->v[at];
        t->bytes[kind] -= t->v[at].bytes;
        t->v[at].kind = DELETED;
        t->live--;
    }
    pthread_mutex_unlock(&t->mu);
    return at >= 0 ? 0 : -1;
}

int allocs_get(struct allocs *t, uint64_t key, enum allocs_kind kind, struct allocs_entry *out)
{
    pthread_mutex_lock(&t->mu);
    long at = find(t, key, kind);
    if (at >= 0 && out)
        *out = t->v[at];
    pthread_mutex_unlock(&t->mu);
    return at >= 0 ? 0 : -1;
}

void allocs_each(struct allocs *t, void (*fn)(const struct allocs_entry *e, void *arg), void *arg)
{
    pthread_mutex_lock(&t->mu);
    for (size_t i = 0; i < t->cap; i++)
        if (t->v[i].kind != 0 && t->v[i].kind != DELETED)
            fn(&t->v[i], arg);
    pthread_mutex_unlock(&t->mu);
}

void allocs_clear(struct allocs *t)
{
    pthread_mutex_lock(&t->mu);
    if (t->v)
        memset(t->v, 0, t->cap * sizeof *t->v);
    t->used = t->live = 0;
    memset(t->bytes, 0, sizeof t->bytes);
    pthread_mutex_unlock(&t->mu);
}
