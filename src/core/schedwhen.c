/* schedwhen: when the scheduler's next step is due, and what the daemon
 * asks of it between steps (schedwhen.h). */
#include "core/schedwhen.h"

#include "core/schedroom.h"

#define BIT(g) (1u << (g))

/* How long a model that came back is spared. Auto: what moving it out
 * and back costs. A waiter kept longer than that loses more than the
 * switch the model's staying might save (the break-even of renting
 * against buying), so fast-swapped models are spared a fraction of a
 * second and models that restart for seconds; 1 s until measured. */
uint64_t schedwhen_spared_ms(const struct sched *s, const struct sched_model *m)
{
    if (!s->min_resident_auto)
        return s->min_resident_ms;
    return m->switch_ms ? m->switch_ms : 1000;
}

uint64_t schedwhen_expires(const struct sched *s, unsigned i)
{
    const struct sched_model *m = &s->models[i];
    if (m->state != SCHED_READY || m->holds)
        return 0;
    if (m->pinned || m->keep_ms == SCHED_FOREVER || m->last_used_ms > UINT64_MAX - m->keep_ms)
        return SCHED_FOREVER;
    return m->last_used_ms + m->keep_ms;
}

/* How long a request must have waited before m is preempted for it: the
 * switch delays every request queued for m by what a switch of m takes
 * (1 s until one was measured), so the waiter must have waited that much
 * for each of them; never more than m's slice. */
uint64_t schedwhen_preempt_bar(const struct sched_model *m)
{
    uint64_t cost = m->switch_ms ? m->switch_ms : 1000, bar = (uint64_t)m->backlog * cost;
    return bar < m->slice_ms ? bar : m->slice_ms;
}

static void sooner(uint64_t *next, uint64_t t, uint64_t now)
{
    if (t > now && t < *next)
        *next = t;
}

uint64_t schedwhen_next_ms(const struct sched *s, uint64_t now)
{
    uint64_t next = SCHED_FOREVER;
    bool waiting = s->nqueue > 0;
    for (size_t i = 0; i < s->nqueue; i++)
        if (s->queue[i].deadline_ms)
            sooner(&next, s->queue[i].deadline_ms, now);
    for (size_t k = 0; k < s->nmodels; k++) {
        const struct sched_model *m = &s->models[k];
        waiting |= m->want && (m->state == SCHED_SUSPENDED || m->state == SCHED_STOPPED);
        if (m->state == SCHED_STOPPED && m->want)
            sooner(&next, m->retry_at_ms, now);
        uint64_t until = schedwhen_expires(s, (unsigned)k);
        if (until && until != SCHED_FOREVER)
            sooner(&next, until, now);
    }
    for (size_t k = 0; waiting && k < s->nmodels; k++) {
        const struct sched_model *m = &s->models[k];
        if (m->pinned)
            continue;
        if (m->state == SCHED_READY && !m->holds)
            sooner(&next, m->resident_ms + schedwhen_spared_ms(s, m), now);
        else if (m->state == SCHED_BUSY && m->preempt && m->gpu >= 0 && (size_t)m->gpu < s->ngpus) {
            uint64_t t = m->resident_ms + m->slice_ms;
            uint64_t gap = s->gpus[m->gpu].last_preempt_ms + s->preempt_gap_ms;
            sooner(&next, t > gap ? t : gap, now);
            /* a waiter passes its bar */
            for (size_t q = 0; q < s->nqueue; q++)
                sooner(&next, s->queue[q].since_ms + schedwhen_preempt_bar(m), now);
        }
    }
    return next;
}

bool schedwhen_contended(const struct sched *s, int g)
{
    if (g < 0 || (size_t)g >= s->ngpus)
        return false;
    const struct sched_gpu *G = &s->gpus[g];
    uint64_t hold = G->capacity > G->foreign ? G->capacity - G->foreign : 0, want = 0;
    if (G->budget && G->budget < hold)
        hold = G->budget;
    for (size_t i = 0; i < s->nmodels; i++) {
        const struct sched_model *m = &s->models[i];
        uint32_t ok = m->allowed ? m->allowed : ~0u;
        if ((ok & BIT(g)) && m->state != SCHED_FAILED)
            want += m->need;
    }
    return want > hold;
}

int schedwhen_next_victim(const struct sched *s, int g)
{
    int best = -1;
    for (size_t i = 0; i < s->nmodels; i++) {
        const struct sched_model *c = &s->models[i];
        if (!schedroom_on(c, g) || c->pinned || (c->state != SCHED_READY && c->state != SCHED_BUSY))
            continue;
        const struct sched_model *b = best >= 0 ? &s->models[best] : NULL;
        /* idle ones go first (pick_victims), busy ones by preemption only */
        bool idle = c->state == SCHED_READY && !c->holds,
             bidle = b && b->state == SCHED_READY && !b->holds;
        if (!b || (idle && !bidle) ||
            (idle == bidle && (c->priority < b->priority ||
                               (c->priority == b->priority && c->last_used_ms < b->last_used_ms))))
            best = (int)i;
    }
    return best;
}
