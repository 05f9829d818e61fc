/* schedroom: what each GPU has, holds and has promised, as the scheduler
 * counts it (core/schedroom.h). Pure: it reads the scheduler's tables. */
#include "core/schedroom.h"

bool schedroom_on(const struct sched_model *m, int g)
{
    return (m->gpus & (1u << (g))) != 0;
}

int schedroom_first(uint32_t mask)
{
    return mask ? __builtin_ctz(mask) : -1;
}

/* A model on a GPU, holding or about to hold its memory there. */
bool schedroom_on_gpu(const struct sched_model *m)
{
    switch (m->state) {
    case SCHED_STARTING:
    case SCHED_READY:
    case SCHED_BUSY:
    case SCHED_SUSPENDING:
    case SCHED_RESUMING:
    case SCHED_STOPPING:
        return true;
    default:
        return false;
    }
}

/* What a model may still take on g: what the GPU has free after everyone,
 * and what the models' budget has left after the models. */
uint64_t schedroom_room(const struct sched *s, int g)
{
    const struct sched_gpu *G = &s->gpus[g];
    uint64_t committed = sched_committed(s, g), used = G->foreign + committed;
    uint64_t r = G->capacity > used ? G->capacity - used : 0;
    if (G->budget) {
        uint64_t b = G->budget > committed ? G->budget - committed : 0;
        r = b < r ? b : r;
    }
    return r > G->claimed ? r - G->claimed : 0;
}

/* Memory on g that models on their way out will give back. */
uint64_t schedroom_coming(const struct sched *s, int g)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < s->nmodels; i++) {
        const struct sched_model *m = &s->models[i];
        if (schedroom_on(m, g) && (m->state == SCHED_SUSPENDING || m->state == SCHED_STOPPING))
            sum += m->need;
    }
    return sum;
}

/* What g will have for one more model once what is leaving has left,
 * after everything committed (overlapped resumes included): negative when
 * promised already. */
int64_t schedroom_avail(const struct sched *s, int g)
{
    const struct sched_gpu *G = &s->gpus[g];
    int64_t committed = (int64_t)sched_committed(s, g), leaving = (int64_t)schedroom_coming(s, g);
    int64_t a = (int64_t)G->capacity - (int64_t)G->foreign - committed + leaving;
    if (G->budget) {
        int64_t b = (int64_t)G->budget - committed + leaving;
        a = b < a ? b : a;
    }
    return a - (int64_t)G->claimed;
}

uint64_t schedroom_host_used(const struct sched *s)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < s->nmodels; i++) {
        const struct sched_model *m = &s->models[i];
        if (m->state == SCHED_SUSPENDED || m->state == SCHED_RESUMING)
            sum += m->host_bytes; /* a resume holds its host copy until it is done */
        else if (m->state == SCHED_SUSPENDING)
            sum += m->need;
    }
    return sum;
}

/* ---- max_loaded: places for loaded models ---- */

/* Loaded, and holding its place: a model on its way out (suspending,
 * stopping) has given its place back, as its memory counts as coming. */
bool schedroom_holds_place(const struct sched_model *m)
{
    return m->state == SCHED_STARTING || m->state == SCHED_READY || m->state == SCHED_BUSY ||
           m->state == SCHED_RESUMING;
}

/* Whether g (g < 0: the machine) has a place for one more model, with
 * the places promised during this step. */
bool schedroom_has_place(const struct sched *s, int g)
{
    unsigned max = g < 0 ? s->max_loaded : s->max_loaded_gpu;
    if (!max)
        return true;
    unsigned n = g < 0 ? s->places_claimed_all : s->places_claimed[g];
    for (size_t i = 0; i < s->nmodels; i++)
        n += schedroom_holds_place(&s->models[i]) && (g < 0 || (s->models[i].gpus & (1u << g)));
    return n < max;
}
