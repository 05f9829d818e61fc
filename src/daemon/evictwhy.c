/* evictwhy: the scheduler's record of an eviction read with the daemon's
 * names, clock and demands. */
#include "daemon/evictwhy.h"

#include <stdio.h>
#include <string.h>

#include "core/units.h"

static const char *why_name(enum sched_out_why w)
{
    static const char *const names[] = {[SCHED_OUT_NONE] = "asked",
                                        [SCHED_OUT_ROOM] = "room",
                                        [SCHED_OUT_PLACE] = "place",
                                        [SCHED_OUT_PREEMPT] = "preempt",
                                        [SCHED_OUT_KEEPALIVE] = "keep_alive"};
    return w <= SCHED_OUT_KEEPALIVE ? names[w] : "?";
}

void evictwhy_note(struct daemon *d, unsigned i)
{
    const struct sched_out *o = &d->smodels[i].out;
    const char *who = o->for_demand ? demand_who(&d->demands, o->for_demand) : NULL;
    snprintf(d->dm[i].out_who, sizeof d->dm[i].out_who, "%s",
             who && *who ? who
             : o->why == SCHED_OUT_PREEMPT ? "its requests held while it was out"
                                           : "");
}

/* "3 min ago", "12 s ago", "never". */
static void ago(uint64_t then, uint64_t now, char *out, size_t len)
{
    uint64_t s = then && now > then ? (now - then) / 1000 : 0;
    if (!then)
        snprintf(out, len, "never used");
    else if (s < 120)
        snprintf(out, len, "last used %llu s before", (unsigned long long)s);
    else
        snprintf(out, len, "last used %llu min before", (unsigned long long)(s / 60));
}

void evictwhy_text(const struct daemon *d, unsigned i, char *out, size_t len)
{
    const struct sched_model *m = &d->smodels[i];
    const struct sched_out *o = &m->out;
    out[0] = '\0';
    if (o->why == SCHED_OUT_NONE)
        return;
    const char *other = o->for_model >= 0 && (size_t)o->for_model < d->sched.nmodels
                            ? d->smodels[o->for_model].name
                            : "?";
    const char *who = d->dm[i].out_who;
    char a[32], b[32], used[48], who_text[128] = "";
    if (who[0])
        snprintf(who_text, sizeof who_text, ", asked by %s", who);
    ago(m->last_used_ms, o->at_ms, used, sizeof used);
    const char *gone = !o->stopped                    ? ""
                       : m->evict == SCHED_EVICT_STOP ? "; stopped (evict = stop)"
                                                      : "; stopped: no room left to suspend it "
                                                        "to (host_budget, spill_budget)";
    switch (o->why) {
    case SCHED_OUT_ROOM:
        snprintf(out, len,
                 "for %s%s: it needs %s on GPU %d, %s was free; this one was idle, the least "
                 "recently used of the lowest priority (%d, %s) of %u that could go%s",
                 other, who_text, units_fmt_size(o->need, a, sizeof a), o->gpu,
                 units_fmt_size(o->free, b, sizeof b), m->priority, used, o->candidates, gone);
        break;
    case SCHED_OUT_PLACE:
        snprintf(out, len,
                 "for %s%s: a place (max_loaded); this one was idle, the least recently used of "
                 "the lowest priority (%d, %s) of %u that could go%s",
                 other, who_text, m->priority, used, o->candidates, gone);
        break;
    case SCHED_OUT_PREEMPT:
        snprintf(out, len,
                 "for %s%s: its turn on GPU %d (%s needed); this one was answering past its "
                 "slice, the lowest priority (%d) there; its requests wait for it",
                 other, who_text, o->gpu, units_fmt_size(o->need, a, sizeof a), m->priority);
        break;
    case SCHED_OUT_KEEPALIVE:
        snprintf(out, len, "unused for its keep_alive (%s)%s", used, gone);
        break;
    case SCHED_OUT_NONE:
        break;
    }
}

json_t *evictwhy_json(const struct daemon *d, unsigned i)
{
    const struct sched_model *m = &d->smodels[i];
    const struct sched_out *o = &m->out;
    if (o->why == SCHED_OUT_NONE)
        return NULL;
    char text[600];
    evictwhy_text(d, i, text, sizeof text);
    bool other = o->for_model >= 0 && (size_t)o->for_model < d->sched.nmodels;
    json_t *j = json_pack("{s:s, s:o, s:o, s:o, s:I, s:I, s:i, s:i, s:o, s:b, s:I, s:s}", "why",
                          why_name(o->why), "for",
                          other ? json_string(d->smodels[o->for_model].name) : json_null(),
                          "request",
                          d->dm[i].out_who[0] ? json_string(d->dm[i].out_who) : json_null(),
                          "gpu", o->gpu >= 0 ? json_integer(o->gpu) : json_null(),
                          "needed_bytes", (json_int_t)o->need, "free_bytes", (json_int_t)o->free,
                          "candidates", (int)o->candidates, "priority", m->priority,
                          "last_used_ms",
                          m->last_used_ms ? json_integer((json_int_t)daemon_wall_ms(m->last_used_ms))
                                          : json_null(),
                          "stopped", o->stopped, "at_ms", (json_int_t)daemon_wall_ms(o->at_ms),
                          "text", text);
    return j;
}
