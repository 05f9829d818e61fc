/* top_hist: the rings of recent figures. */
#include "top/top_hist.h"

#include <stdlib.h>

static uint16_t *at(const struct top_hist *h, size_t gpu, enum top_series s)
{
    return h->v + (gpu * TOP_H_COUNT + s) * TOP_HISTORY;
}

static uint16_t permille(uint64_t part, uint64_t whole)
{
    if (!whole)
        return TOP_HIST_NONE;
    return (uint16_t)(part >= whole ? 1000 : part * 1000 / whole);
}

void top_hist_record(struct top_hist *h, const struct snap *s)
{
    if (!h->v) {
        h->ngpus = s->ngpus;
        h->v = malloc((h->ngpus ? h->ngpus : 1) * TOP_H_COUNT * TOP_HISTORY * sizeof *h->v);
        if (!h->v)
            return;
        for (size_t i = 0; i < (h->ngpus ? h->ngpus : 1) * TOP_H_COUNT * TOP_HISTORY; i++)
            h->v[i] = TOP_HIST_NONE;
    }
    for (size_t i = 0; i < h->ngpus && i < s->ngpus; i++) {
        const struct snap_gpu *g = &s->gpus[i];
        const struct snap_mem *m = &g->mem;
        uint64_t used = m->total > m->free ? m->total - m->free : 0;
        bool util = g->have & SNAP_HAVE_UTIL;
        bool power = (g->have & SNAP_HAVE_POWER) && (g->have & SNAP_HAVE_POWER_LIMIT);
        at(h, i, TOP_H_MEMORY)[h->pos] =
            g->have & SNAP_HAVE_MEMORY ? permille(used, m->total) : TOP_HIST_NONE;
        at(h, i, TOP_H_UTIL)[h->pos] = util ? permille(g->util_gpu, 100) : TOP_HIST_NONE;
        at(h, i, TOP_H_MBW)[h->pos] = util ? permille(g->util_mem, 100) : TOP_HIST_NONE;
        at(h, i, TOP_H_POWER)[h->pos] =
            power ? permille(g->power_mw, g->power_limit_mw) : TOP_HIST_NONE;
    }
    h->pos = (h->pos + 1) % TOP_HISTORY;
    if (h->filled < TOP_HISTORY)
        h->filled++;
}

void top_hist_last(const struct top_hist *h, size_t gpu, enum top_series which, int w,
                   uint16_t *out)
{
    if (w > TOP_HISTORY)
        w = TOP_HISTORY;
    for (int i = 0; i < w; i++) {
        size_t back = (size_t)(w - i); /* 1: the newest */
        out[i] = !h->v || gpu >= h->ngpus || back > h->filled
                     ? TOP_HIST_NONE
                     : at(h, gpu, which)[(h->pos + TOP_HISTORY - back) % TOP_HISTORY];
    }
}

void top_hist_free(struct top_hist *h)
{
    free(h->v);
    h->v = NULL;
    h->ngpus = h->pos = h->filled = 0;
}
