/* sched: what `vram serve` does next, read top to bottom.
 *
 * sched_step applies one event to the model table (apply), then settles:
 * demands whose model is ready are granted, models that must be resident
 * are placed (start or resume) where they fit, and when they fit nowhere,
 * models holding no request are evicted to make room; last, models whose
 * keep-alive ran out are evicted with no one waiting. Eviction is decided
 * once: victims move to SUSPENDING or STOPPING, and the memory they are
 * giving back counts as coming, so a waiting model is placed when it
 * arrives and no second round of victims is taken meanwhile. */
#include "core/sched.h"

#include <stdio.h>
#include <string.h>

#include "core/schedroom.h"
#include "core/schedwhen.h"
#include "core/units.h"

const char *sched_state_name(enum sched_state st)
{
    static const char *const names[] = {"stopped",   "starting", "ready",    "busy",  "suspending",
                                        "suspended", "resuming", "stopping", "failed"};
    return (unsigned)st < sizeof names / sizeof names[0] ? names[st] : "?";
}

struct out {
    struct sched_action *v;
    size_t n, max;
};

static struct sched_action *act(struct out *o, enum sched_act k, unsigned model, int gpu,
                                uint64_t id)
{
    if (o->n == o->max)
        return NULL;
    struct sched_action *a = &o->v[o->n++];
    memset(a, 0, sizeof *a);
    a->kind = k;
    a->model = model;
    a->gpu = gpu;
    a->id = id;
    return a;
}

#define BIT(g) (1u << (g))

uint64_t sched_committed(const struct sched *s, int gpu)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < s->nmodels; i++)
        if (schedroom_on(&s->models[i], gpu) && schedroom_on_gpu(&s->models[i]))
            sum += s->models[i].need;
    return sum;
}

static bool queued(const struct sched *s, unsigned model)
{
    for (size_t i = 0; i < s->nqueue; i++)
        if (s->queue[i].model == model)
            return true;
    return false;
}

static void dequeue(struct sched *s, size_t i)
{
    memmove(&s->queue[i], &s->queue[i + 1], (s->nqueue - i - 1) * sizeof s->queue[0]);
    s->nqueue--;
}

/* Refuses every queued demand for model with why. */
static void refuse_all(struct sched *s, unsigned model, enum sched_refusal r, const char *why,
                       struct out *o)
{
    for (size_t i = 0; i < s->nqueue;) {
        if (s->queue[i].model != model) {
            i++;
            continue;
        }
        struct sched_action *a = act(o, SCHED_ACT_REFUSE, model, -1, s->queue[i].id);
        if (a) {
            a->refusal = r;
            snprintf(a->why, sizeof a->why, "%s: %s", s->models[model].name, why);
        }
        dequeue(s, i);
    }
}

/* It holds no room on any GPU: stopped, failed, or out in host memory. */
static void off_gpus(struct sched_model *m)
{
    m->gpu = -1;
    m->gpus = 0;
}

/* A start that failed, or a process that died: try again after a backoff
 * that doubles, up to max_failures in a row; then the model is failed and
 * its demands are told why. */
static void failure(struct sched *s, unsigned i, const char *error, uint64_t now, struct out *o)
{
    struct sched_model *m = &s->models[i];
    snprintf(m->error, sizeof m->error, "%s", error && *error ? error : "exited");
    m->holds = 0;
    off_gpus(m);
    m->failures++;
    if (m->failures >= s->max_failures) {
        m->state = SCHED_FAILED;
        m->want = false;
        char why[200];
        snprintf(why, sizeof why, "failed %u times, last: %s", m->failures, m->error);
        refuse_all(s, i, SCHED_REFUSED_FAILED, why, o);
        return;
    }
    m->state = SCHED_STOPPED;
    m->want = true;
    uint64_t wait = s->backoff_ms;
    for (unsigned k = 1; k < m->failures && wait < 60000; k++)
        wait *= 2;
    m->retry_at_ms = now + wait;
}

/* ---- events ---- */

static void apply(struct sched *s, const struct sched_event *e, uint64_t now, struct out *o)
{
    if (e->kind == SCHED_EV_TICK)
        return;
    if (e->model >= s->nmodels)
        return;
    struct sched_model *m = &s->models[e->model];
    switch (e->kind) {
    case SCHED_EV_DEMAND:
        if (m->state == SCHED_FAILED) {
            struct sched_action *a = act(o, SCHED_ACT_REFUSE, e->model, -1, e->id);
            if (a) {
                a->refusal = SCHED_REFUSED_FAILED;
                snprintf(a->why, sizeof a->why, "%s: failed: %s", m->name, m->error);
            }
        } else if (s->nqueue == SCHED_MAX_QUEUE) {
            struct sched_action *a = act(o, SCHED_ACT_REFUSE, e->model, -1, e->id);
            if (a) {
                a->refusal = SCHED_REFUSED_QUEUE_FULL;
                snprintf(a->why, sizeof a->why, "too many waiting requests (%d)", SCHED_MAX_QUEUE);
            }
        } else {
            s->queue[s->nqueue++] =
                (struct sched_demand){e->id, e->model, e->deadline_ms, e->hold, now};
        }
        break;
    case SCHED_EV_RELEASE:
        if (m->holds)
            m->holds--;
        m->last_used_ms = now;
        m->keep_ms = e->keep_set ? e->keep_ms : m->keep_alive_ms;
        if (!m->holds && m->state == SCHED_BUSY)
            m->state = SCHED_READY;
        if (!m->holds && m->preempted && m->state == SCHED_SUSPENDED) {
            m->preempted = false; /* nobody waits for it any more */
            m->want = false;
        }
        break;
    case SCHED_EV_UNLOAD:
        m->want = false;
        m->out = (struct sched_out){.why = SCHED_OUT_NONE, .for_model = -1, .gpu = m->gpu,
                                    .at_ms = now};
        refuse_all(s, e->model, SCHED_REFUSED_UNLOADED, "unloaded", o);
        if (m->state == SCHED_FAILED) {
            m->state = SCHED_STOPPED; /* unload clears a failure: the next load tries again */
            m->failures = 0;
        } else if (m->state != SCHED_STOPPED && m->state != SCHED_STOPPING) {
            if (m->state == SCHED_SUSPENDED) /* while its process stops, the GPU it left is free */
                off_gpus(m);
            m->state = SCHED_STOPPING;
            m->holds = 0;
            act(o, SCHED_ACT_STOP, e->model, m->gpu, 0);
        }
        break;
    case SCHED_EV_SUSPEND:
        if (m->state == SCHED_READY && !m->holds) {
            m->out = (struct sched_out){.why = SCHED_OUT_NONE, .for_model = -1, .gpu = m->gpu,
                                        .at_ms = now};
            m->state = SCHED_SUSPENDING;
            m->want = false;
            act(o, SCHED_ACT_SUSPEND, e->model, m->gpu, 0);
        }
        break;
    case SCHED_EV_RESUME:
        if (m->state == SCHED_SUSPENDED) {
            m->want = true;
            m->resume_gpu = m->bound || m->width > 1 ? -1 : e->gpu;
        }
        break;
    case SCHED_EV_READY:
        if (m->state == SCHED_STARTING) {
            m->state = SCHED_READY;
            if (e->bytes)
                m->need = e->bytes;
            m->failures = 0;
            m->error[0] = '\0';
            m->last_used_ms = m->resident_ms = now;
            m->keep_ms = m->keep_alive_ms;
        }
        break;
    case SCHED_EV_FAILED:
    case SCHED_EV_EXITED:
        if (m->state == SCHED_STOPPING || m->state == SCHED_STOPPED) {
            m->state = SCHED_STOPPED;
            off_gpus(m);
            m->holds = 0;
        } else if (m->state != SCHED_FAILED) {
            failure(s, e->model, e->error, now, o);
        }
        break;
    case SCHED_EV_SUSPENDED:
        if (m->state != SCHED_SUSPENDING)
            break;
        if (e->ok) {
            m->state = SCHED_SUSPENDED;
            m->host_bytes = e->bytes ? e->bytes : m->need;
            m->bound = e->bound ? m->gpus : 0;
        } else if (m->preempted) { /* fast swap refused before moving anything: it runs on */
            snprintf(m->error, sizeof m->error, "not preempted: %s", e->error ? e->error : "?");
            m->preempted = false;
            m->no_preempt = true;
            m->want = false;
            m->state = m->holds ? SCHED_BUSY : SCHED_READY;
        } else { /* cannot suspend: free the memory anyway */
            snprintf(m->error, sizeof m->error, "suspend failed: %s", e->error ? e->error : "?");
            m->state = SCHED_STOPPING;
            act(o, SCHED_ACT_STOP, e->model, m->gpu, 0);
        }
        break;
    case SCHED_EV_RESUMED:
        if (m->state != SCHED_RESUMING)
            break;
        m->resume_gpu = -1;
        if (e->ok) {
            m->bound = 0;
            m->state = m->holds ? SCHED_BUSY : SCHED_READY; /* its held requests go on */
            m->preempted = false;
            m->host_bytes = 0;
            m->last_used_ms = m->resident_ms = now;
            m->keep_ms = m->keep_alive_ms;
        } else {
            snprintf(m->error, sizeof m->error, "resume failed: %s", e->error ? e->error : "?");
            m->state = SCHED_SUSPENDED;
            off_gpus(m);
            m->want = false;
            refuse_all(s, e->model, SCHED_REFUSED_RESUME, m->error, o);
        }
        break;
    case SCHED_EV_WITHDRAW:
        /* nothing more is owed to it: a client that left waiting neither
         * makes room nor holds a place in the queue (nor, by filling it,
         * keeps anyone else out) */
        for (size_t i = 0; i < s->nqueue; i++)
            if (s->queue[i].id == e->id && s->queue[i].model == e->model) {
                dequeue(s, i);
                break;
            }
        break;
    case SCHED_EV_TICK:
        break;
    }
}

/* ---- settling ---- */

/* Holding no request, unpinned, nobody waiting for it, and resident long
 * enough not to thrash: it may go the moment another needs the room. */
static bool evictable(const struct sched *s, unsigned i, uint64_t now)
{
    const struct sched_model *m = &s->models[i];
    return m->state == SCHED_READY && !m->holds && !m->pinned && !queued(s, i) &&
           now - m->resident_ms >= schedwhen_spared_ms(s, m);
}

/* Whether suspended models have room for need bytes more: host memory
 * and, below it, the disk (the daemon puts each byte in the tier that has
 * room; the driver's checkpoint only in host memory). */
static bool room_out(const struct sched *s, uint64_t need)
{
    return schedroom_host_used(s) + need <= s->host_budget + s->spill_budget;
}

/* The oldest demand for model i: the request it is placed for; 0: none
 * (requests held while it was preempted). */
static uint64_t oldest_demand(const struct sched *s, int i)
{
    uint64_t id = 0, since = UINT64_MAX;
    for (size_t q = 0; i >= 0 && q < s->nqueue; q++)
        if (s->queue[q].model == (unsigned)i && s->queue[q].since_ms < since) {
            since = s->queue[q].since_ms;
            id = s->queue[q].id;
        }
    return id;
}

/* Why v goes: recorded before it goes, for whoever asks later. */
static void went_out(struct sched *s, unsigned v, enum sched_out_why why, int for_model, int g,
                     uint64_t need, unsigned candidates, uint64_t now)
{
    struct sched_out *w = &s->models[v].out;
    *w = (struct sched_out){.why = why, .for_model = for_model, .gpu = g, .need = need,
                            .candidates = candidates, .at_ms = now};
    w->for_demand = oldest_demand(s, for_model);
    w->free = g >= 0 && (size_t)g < s->ngpus && schedroom_avail(s, g) > 0
                  ? (uint64_t)schedroom_avail(s, g)
                  : 0;
}

/* How many models on g (any GPU: -1) may go now. */
static unsigned evictable_on(const struct sched *s, int g, uint64_t now);

/* Suspended if its path allows and the host budget has room, else stopped
 * (saying why). */
static void evict(struct sched *s, unsigned i, struct out *o)
{
    struct sched_model *v = &s->models[i];
    bool suspend = v->evict == SCHED_EVICT_SUSPEND && room_out(s, v->need);
    v->out.stopped = !suspend;
    v->state = suspend ? SCHED_SUSPENDING : SCHED_STOPPING;
    v->want = false;
    v->out_ms = 0;
    struct sched_action *a = act(o, suspend ? SCHED_ACT_SUSPEND : SCHED_ACT_STOP, i, v->gpu, 0);
    char b[32], c[32];
    if (a && !suspend)
        snprintf(a->why, sizeof a->why, "%s",
                 v->evict == SCHED_EVICT_STOP
                     ? "evict = stop"
                     : "no room to suspend it: host_budget and spill_budget are full");
    if (a && !suspend && v->evict == SCHED_EVICT_SUSPEND)
        snprintf(a->why, sizeof a->why,
                 "no room to suspend it: %s held by suspended models, %s in host_budget and "
                 "spill_budget",
                 units_fmt_size(schedroom_host_used(s), b, sizeof b),
                 units_fmt_size(s->host_budget + s->spill_budget, c, sizeof c));
}

/* Answering, but it may be suspended mid-request: its turn is over and
 * fast swap can move it. */
static bool preemptible(const struct sched *s, unsigned i, uint64_t now)
{
    const struct sched_model *m = &s->models[i];
    return m->state == SCHED_BUSY && m->preempt && !m->no_preempt && !m->pinned &&
           m->evict == SCHED_EVICT_SUSPEND && now - m->resident_ms >= m->slice_ms &&
           room_out(s, m->need);
}

/* Since when self has been waited for: its oldest demand, or, preempted,
 * since it went out. */
static uint64_t waited_since(const struct sched *s, unsigned self, uint64_t now)
{
    uint64_t since = s->models[self].want && s->models[self].out_ms ? s->models[self].out_ms : now;
    for (size_t i = 0; i < s->nqueue; i++)
        if (s->queue[i].model == self && s->queue[i].since_ms < since)
            since = s->queue[i].since_ms;
    return since;
}

/* Preempts a model answering on g to free need bytes for self: the lowest
 * priority first, then the one that has had the GPU longest, once self
 * has waited past its bar. Its requests stay held; it comes back when it
 * can (want). True when one was taken. */
static bool preempt(struct sched *s, int g, unsigned self, uint64_t need, uint64_t now,
                    struct out *o)
{
    if (s->gpus[g].last_preempt_ms && now - s->gpus[g].last_preempt_ms < s->preempt_gap_ms)
        return false;
    int best = -1;
    uint64_t waited = now - waited_since(s, self, now);
    for (size_t i = 0; i < s->nmodels; i++) {
        const struct sched_model *c = &s->models[i];
        if (i == self || !schedroom_on(c, g) || !preemptible(s, (unsigned)i, now) ||
            waited < schedwhen_preempt_bar(c))
            continue;
        const struct sched_model *b = best >= 0 ? &s->models[best] : NULL;
        if (!b || c->priority < b->priority ||
            (c->priority == b->priority && c->resident_ms < b->resident_ms))
            best = (int)i;
    }
    if (best < 0 || schedroom_avail(s, g) + (int64_t)s->models[best].need < (int64_t)need)
        return false; /* one model out must make the room: never a chain of them */
    struct sched_model *v = &s->models[best];
    struct sched_action *a = act(o, SCHED_ACT_SUSPEND, (unsigned)best, g, 0);
    if (!a)
        return false;
    went_out(s, (unsigned)best, SCHED_OUT_PREEMPT, (int)self, g, need, 0, now);
    a->preempt = true;
    v->state = SCHED_SUSPENDING;
    v->preempted = true;
    v->want = true; /* its requests wait for it */
    v->out_ms = now;
    v->preemptions++;
    s->gpus[g].last_preempt_ms = now;
    return true;
}

/* Victims on g to free need bytes for model self (and, when place, one
 * of g's places: at least one victim), lowest priority first, then least
 * recently used; their count, or -1 when even all would not do. */
static int pick_victims(const struct sched *s, int g, unsigned self, uint64_t need, bool place,
                        uint64_t now, unsigned *v)
{
    int64_t have = schedroom_avail(s, g);
    int n = 0;
    bool taken[s->nmodels > 0 ? s->nmodels : 1];
    memset(taken, 0, sizeof taken);
    while (have < (int64_t)need || (place && !n)) {
        int best = -1;
        for (size_t i = 0; i < s->nmodels; i++) {
            const struct sched_model *c = &s->models[i];
            if (i == self || taken[i] || !schedroom_on(c, g) || !evictable(s, (unsigned)i, now))
                continue;
            const struct sched_model *b = best >= 0 ? &s->models[best] : NULL;
            if (!b || c->priority < b->priority ||
                (c->priority == b->priority && c->last_used_ms < b->last_used_ms))
                best = (int)i;
        }
        if (best < 0)
            return -1;
        taken[best] = true;
        v[n++] = (unsigned)best;
        have += (int64_t)s->models[best].need;
    }
    return n;
}

/* The one model to evict anywhere for a place in all (max_loaded), lowest
 * priority first, then least recently used; -1 when none may go. */
static int place_victim(const struct sched *s, unsigned self, uint64_t now)
{
    int best = -1;
    for (size_t i = 0; i < s->nmodels; i++) {
        const struct sched_model *c = &s->models[i];
        if (i == self || !evictable(s, (unsigned)i, now))
            continue;
        const struct sched_model *b = best >= 0 ? &s->models[best] : NULL;
        if (!b || c->priority < b->priority ||
            (c->priority == b->priority && c->last_used_ms < b->last_used_ms))
            best = (int)i;
    }
    return best;
}

static unsigned evictable_on(const struct sched *s, int g, uint64_t now)
{
    unsigned n = 0;
    for (size_t i = 0; i < s->nmodels; i++)
        n += (g < 0 || schedroom_on(&s->models[i], g)) && evictable(s, (unsigned)i, now);
    return n;
}

/* The places model i takes on mask, promised until it is placed. */
static void claim_places(struct sched *s, uint32_t mask)
{
    for (int g = 0; g < (int)s->ngpus; g++)
        if (mask & (1u << g))
            s->places_claimed[g]++;
    s->places_claimed_all++;
}

/* The GPUs model m may take now: those fast swap moved it out of (it comes
 * back only there), the one an explicit resume names, else those of its
 * configuration. */
static uint32_t allowed(const struct sched *s, const struct sched_model *m)
{
    uint32_t all = s->ngpus >= 32 ? ~0u : BIT(s->ngpus) - 1;
    if (m->state == SCHED_SUSPENDED && m->bound)
        return m->bound & all;
    if (m->resume_gpu >= 0 && (size_t)m->resume_gpu < s->ngpus)
        return BIT(m->resume_gpu);
    return m->allowed ? m->allowed & all : all;
}

static unsigned width(const struct sched_model *m)
{
    return m->width ? m->width : 1;
}

/* Sends model i to the GPUs of mask (all its parts at once). */
static void put(struct sched *s, unsigned i, uint32_t mask, uint64_t overlap, struct out *o)
{
    struct sched_model *m = &s->models[i];
    bool resume = m->state == SCHED_SUSPENDED;
    struct sched_action *a =
        act(o, resume ? SCHED_ACT_RESUME : SCHED_ACT_START, i, schedroom_first(mask), 0);
    if (a)
        a->overlap = overlap;
    m->gpus = mask;
    m->gpu = schedroom_first(mask);
    m->state = resume ? SCHED_RESUMING : SCHED_STARTING;
}

/* w GPUs of ok, best first by score (higher is better), all of them when
 * exact; 0 when there are not enough. */
static uint32_t choose(const struct sched *s, uint32_t ok, unsigned w, bool exact,
                       const int64_t *score)
{
    if (exact)
        return (unsigned)__builtin_popcount(ok) == w ? ok : 0;
    uint32_t got = 0;
    for (unsigned k = 0; k < w; k++) {
        int best = -1;
        for (int g = 0; g < (int)s->ngpus; g++)
            if ((ok & BIT(g)) && !(got & BIT(g)) && (best < 0 || score[g] > score[best]))
                best = g;
        if (best < 0)
            return 0;
        got |= BIT(best);
    }
    return got;
}

/* A model fast swap moved out comes back now on the GPUs it left, while
 * what is leaving them still leaves, if it will fit once that is out. */
static bool overlap(struct sched *s, unsigned i, struct out *o)
{
    struct sched_model *m = &s->models[i];
    uint32_t b = allowed(s, m);
    uint64_t leaving = 0;
    if (!s->overlap || m->state != SCHED_SUSPENDED || !m->bound || !b || !schedroom_has_place(s, -1))
        return false;
    for (int g = 0; g < (int)s->ngpus; g++)
        if (b & BIT(g)) {
            if (schedroom_avail(s, g) < (int64_t)m->need || !schedroom_has_place(s, g))
                return false;
            leaving += schedroom_coming(s, g);
        }
    if (!leaving)
        return false;
    put(s, i, b, leaving, o);
    return true;
}

/* Whether model i could ever be placed: width of the GPUs it may use hold
 * its need with nothing else on them (the budget, else all the GPU gives
 * models). When not, its demands are told now, not at their deadline. */
static bool could_fit(struct sched *s, unsigned i, struct out *o)
{
    struct sched_model *m = &s->models[i];
    uint32_t ok = allowed(s, m);
    unsigned n = 0;
    uint64_t most = 0;
    for (int g = 0; g < (int)s->ngpus; g++) {
        const struct sched_gpu *G = &s->gpus[g];
        uint64_t hold = G->budget && G->budget < G->capacity ? G->budget : G->capacity;
        if (!(ok & BIT(g)))
            continue;
        most = hold > most ? hold : most;
        n += hold >= m->need;
    }
    if (n >= width(m))
        return true;
    char a[32], b[32], why[160];
    snprintf(why, sizeof why,
             "needs %s on each of %u GPU%s, more than %s a GPU it may use holds for models "
             "(budget, or the GPU's size): raise the budget, or lower its vram",
             units_fmt_size(m->need, a, sizeof a), width(m), width(m) == 1 ? "" : "s",
             units_fmt_size(most, b, sizeof b));
    refuse_all(s, i, SCHED_REFUSED_TOO_BIG, why, o);
    m->want = false;
    return false;
}

/* Starts or resumes model i on the GPUs (width of them) where it fits;
 * else evicts on those that need the fewest victims, all or none. True
 * when it was placed. */
static bool place(struct sched *s, unsigned i, uint64_t now, struct out *o)
{
    struct sched_model *m = &s->models[i];
    uint32_t ok = allowed(s, m);
    unsigned w = width(m);
    if (!could_fit(s, i, o))
        return false;
    bool exact = (m->state == SCHED_SUSPENDED && m->bound) || m->resume_gpu >= 0;
    int64_t score[SCHED_MAX_GPUS];
    uint32_t fits = 0, full = 0; /* full: no place left there (max_loaded) */
    bool place_all = schedroom_has_place(s, -1);
    for (int g = 0; g < (int)s->ngpus; g++) {
        score[g] = (int64_t)schedroom_room(s, g);
        if (!schedroom_has_place(s, g))
            full |= BIT(g);
        if ((ok & BIT(g)) && schedroom_room(s, g) >= m->need && !(full & BIT(g)) && place_all)
            fits |= BIT(g);
    }
    uint32_t mask = choose(s, exact ? ok & fits : fits, w, exact, score);
    if (mask && (!exact || mask == ok)) {
        put(s, i, mask, 0, o);
        return true;
    }
    if (overlap(s, i, o))
        return true;
    /* victims: per GPU, the fewest that make the room */
    unsigned victims[SCHED_MAX_GPUS][SCHED_MAX_QUEUE];
    int nv[SCHED_MAX_GPUS];
    uint32_t can = 0;
    for (int g = 0; g < (int)s->ngpus && s->nmodels <= SCHED_MAX_QUEUE; g++) {
        nv[g] = (ok & BIT(g)) ? pick_victims(s, g, i, m->need, full & BIT(g), now, victims[g])
                              : -1;
        if (nv[g] >= 0) {
            can |= BIT(g);
            score[g] = -nv[g];
        }
    }
    mask = choose(s, exact ? ok & can : can, w, exact, score);
    int extra = -1; /* a place in all that the victims on mask do not free */
    bool freed = false;
    for (int g = 0; mask && g < (int)s->ngpus; g++)
        freed |= (mask & BIT(g)) && nv[g] > 0;
    if (mask && !place_all && !freed && (extra = place_victim(s, i, now)) < 0)
        mask = 0;
    if (!mask || (exact && mask != ok)) {
        /* everyone there is answering: a time slice, where allowed (one GPU) */
        for (int g = 0; w == 1 && g < (int)s->ngpus; g++)
            if ((ok & BIT(g)) && preempt(s, g, i, m->need, now, o)) {
                if (overlap(s, i, o))
                    return true;
                s->gpus[g].claimed += m->need; /* what leaves is this one's */
                claim_places(s, BIT(g));
                return false;
            }
        return false;
    }
    for (int g = 0; g < (int)s->ngpus; g++) {
        if (!(mask & BIT(g)))
            continue;
        unsigned could = evictable_on(s, g, now);
        for (int k = 0; k < nv[g]; k++) /* one that spans several GPUs is evicted once */
            if (s->models[victims[g][k]].state == SCHED_READY) {
                /* for memory, or (none needed for it) for a place there */
                went_out(s, victims[g][k],
                         schedroom_room(s, g) >= m->need ? SCHED_OUT_PLACE : SCHED_OUT_ROOM,
                         (int)i, g, m->need, could, now);
                evict(s, victims[g][k], o);
            }
    }
    if (extra >= 0) {
        went_out(s, (unsigned)extra, SCHED_OUT_PLACE, (int)i, -1, m->need,
                 evictable_on(s, -1, now), now);
        evict(s, (unsigned)extra, o);
    }
    if (overlap(s, i, o))
        return true;
    for (int g = 0; g < (int)s->ngpus; g++) /* the room is coming: nobody else takes it */
        if (mask & BIT(g))
            s->gpus[g].claimed += m->need;
    claim_places(s, mask);
    return false;
}

static bool needs_place(const struct sched_model *m, uint64_t now)
{
    return (m->state == SCHED_STOPPED && now >= m->retry_at_ms) || m->state == SCHED_SUSPENDED;
}

static void settle(struct sched *s, uint64_t now, struct out *o)
{
    /* demands: granted when ready, refused when out of time */
    for (size_t i = 0; i < s->nqueue;) {
        struct sched_demand *d = &s->queue[i];
        struct sched_model *m = &s->models[d->model];
        if (m->state == SCHED_READY || m->state == SCHED_BUSY) {
            if (d->hold) {
                m->holds++;
                m->state = SCHED_BUSY;
            }
            m->last_used_ms = now;
            act(o, SCHED_ACT_GRANT, d->model, m->gpu, d->id);
            dequeue(s, i);
            continue;
        }
        if (d->deadline_ms && now >= d->deadline_ms) {
            struct sched_action *a = act(o, SCHED_ACT_REFUSE, d->model, -1, d->id);
            char b[32];
            if (a)
                a->refusal = SCHED_REFUSED_TIMEOUT;
            /* what it waited for: its start (the GPU had room), its way back,
             * or room */
            double waited = (double)(d->deadline_ms - d->since_ms) / 1000;
            if (a && m->state == SCHED_STARTING)
                snprintf(a->why, sizeof a->why,
                         "%s: timed out waiting for it to start: its server did not answer its "
                         "health check within %.0f s (the GPU had room); vram logs %s shows its "
                         "start; a longer wait, or preload it",
                         m->name, waited, m->name);
            else if (a && m->state == SCHED_RESUMING)
                snprintf(a->why, sizeof a->why,
                         "%s: timed out waiting for it to come back from host memory (%.0f s; "
                         "the GPU had room)",
                         m->name, waited);
            else if (a)
                snprintf(a->why, sizeof a->why,
                         "%s: timed out waiting for %s of GPU memory (%s now: %s)", m->name,
                         units_fmt_size(m->need, b, sizeof b), sched_state_name(m->state),
                         m->error[0] ? m->error : "no idle model to evict");
            dequeue(s, i);
            continue;
        }
        i++;
    }
    /* placement: every model someone waits for (a demand, or requests held
     * while it was preempted), the one waiting longest first; what is
     * promised to one is not taken by the next */
    for (size_t g = 0; g < s->ngpus; g++)
        s->gpus[g].claimed = s->places_claimed[g] = 0;
    s->places_claimed_all = 0;
    size_t nm = s->nmodels;
    uint64_t since[nm > 0 ? nm : 1];
    bool waits[nm > 0 ? nm : 1];
    memset(waits, 0, sizeof waits);
    for (size_t i = 0; i < s->nqueue; i++) {
        unsigned k = s->queue[i].model;
        if (!waits[k] || s->queue[i].since_ms < since[k])
            since[k] = s->queue[i].since_ms;
        waits[k] = true;
    }
    for (size_t k = 0; k < nm; k++)
        if (s->models[k].want && (!waits[k] || s->models[k].out_ms < since[k])) {
            since[k] = s->models[k].out_ms;
            waits[k] = true;
        }
    for (;;) {
        int next = -1;
        for (size_t k = 0; k < nm; k++)
            if (waits[k] && needs_place(&s->models[k], now) &&
                (next < 0 || since[k] < since[next]))
                next = (int)k;
        if (next < 0)
            break;
        waits[next] = false;
        place(s, (unsigned)next, now, o);
    }
    /* keep-alive: unused that long, the memory goes back to the machine */
    for (size_t k = 0; k < s->nmodels; k++) {
        uint64_t until = schedwhen_expires(s, (unsigned)k);
        if (until && until != SCHED_FOREVER && now >= until && !queued(s, (unsigned)k)) {
            went_out(s, (unsigned)k, SCHED_OUT_KEEPALIVE, -1, s->models[k].gpu, 0, 0, now);
            evict(s, (unsigned)k, o);
        }
    }
}

size_t sched_step(struct sched *s, const struct sched_event *e, uint64_t now_ms,
                  struct sched_action *out, size_t max)
{
    struct out o = {out, 0, max};
    apply(s, e, now_ms, &o);
    settle(s, now_ms, &o);
    return o.n;
}
