/* metrics: /metrics in Prometheus' text format: each GPU's memory by part,
 * each model's state and counters, the queue. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/acct.h"
#include "daemon/metrics.h"
#include "daemon/proxy.h"

struct text {
    char *p;
    size_t n, cap;
};

static void put(struct text *t, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int w = vsnprintf(t->p + t->n, t->cap - t->n, fmt, ap);
        va_end(ap);
        if (w < 0)
            return;
        if ((size_t)w < t->cap - t->n) {
            t->n += (size_t)w;
            return;
        }
        size_t cap = t->cap * 2 + (size_t)w;
        char *np = realloc(t->p, cap);
        if (!np)
            return;
        t->p = np;
        t->cap = cap;
    }
}

char *metrics_render(const struct daemon *d)
{
    struct text t = {malloc(4096), 0, 4096};
    if (!t.p)
        return NULL;
    t.p[0] = '\0';
    put(&t, "# HELP vram_gpu_memory_bytes Where each GPU's memory went.\n"
            "# TYPE vram_gpu_memory_bytes gauge\n");
    for (size_t g = 0; g < d->snap.ngpus; g++) {
        struct acct a;
        acct_gpu(&d->snap.gpus[g], &a);
        const struct {
            const char *part;
            uint64_t v;
        } parts[] = {{"reserved", a.reserved},         {"display", a.display},
                     {"workloads", a.workloads},       {"other", a.other},
                     {"unattributed", a.unattributed}, {"free", a.free}};
        for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++)
            put(&t, "vram_gpu_memory_bytes{gpu=\"%zu\",part=\"%s\"} %llu\n", g, parts[k].part,
                (unsigned long long)parts[k].v);
    }
    put(&t, "# HELP vram_model_state 1 for the state each model is in.\n"
            "# TYPE vram_model_state gauge\n");
    for (size_t i = 0; i < d->sched.nmodels; i++)
        put(&t, "vram_model_state{model=\"%s\",state=\"%s\"} 1\n", d->smodels[i].name,
            sched_state_name(d->smodels[i].state));
    put(&t, "# TYPE vram_model_vram_bytes gauge\n");
    for (size_t i = 0; i < d->sched.nmodels; i++)
        put(&t, "vram_model_vram_bytes{model=\"%s\"} %llu\n", d->smodels[i].name,
            (unsigned long long)d->smodels[i].need);
    put(&t, "# TYPE vram_model_transitions_total counter\n");
    put(&t, "# TYPE vram_model_last_seconds gauge\n");
    put(&t, "# TYPE vram_model_inflight gauge\n");
    for (size_t i = 0; i < d->sched.nmodels; i++) {
        const struct dmodel *m = &d->dm[i];
        const char *n = d->smodels[i].name;
        put(&t,
            "vram_model_transitions_total{model=\"%s\",kind=\"start\"} %u\n"
            "vram_model_transitions_total{model=\"%s\",kind=\"suspend\"} %u\n"
            "vram_model_transitions_total{model=\"%s\",kind=\"resume\"} %u\n"
            "vram_model_transitions_total{model=\"%s\",kind=\"restart\"} %u\n"
            "vram_model_last_seconds{model=\"%s\",kind=\"start\"} %.3f\n"
            "vram_model_last_seconds{model=\"%s\",kind=\"suspend\"} %.3f\n"
            "vram_model_last_seconds{model=\"%s\",kind=\"resume\"} %.3f\n"
            "vram_model_last_seconds{model=\"%s\",kind=\"first_byte\"} %.3f\n"
            "vram_model_inflight{model=\"%s\"} %u\n",
            n, m->starts, n, m->suspends, n, m->resumes, n, m->restarts, n, m->last_start_s, n,
            m->last_suspend_s, n, m->last_resume_s, n, proxy_last_ttfb(d->proxy, (unsigned)i), n,
            proxy_inflight(d->proxy, (unsigned)i));
    }
    put(&t, "# HELP vram_model_preemptions_total Times a model was suspended mid-request "
            "for another (time slices).\n"
            "# TYPE vram_model_preemptions_total counter\n");
    for (size_t i = 0; i < d->sched.nmodels; i++)
        put(&t, "vram_model_preemptions_total{model=\"%s\"} %u\n", d->smodels[i].name,
            d->smodels[i].preemptions);
    put(&t, "# HELP vram_model_held_seconds_total Time a model's requests waited while it was "
            "preempted.\n"
            "# TYPE vram_model_held_seconds_total counter\n");
    for (size_t i = 0; i < d->sched.nmodels; i++)
        put(&t, "vram_model_held_seconds_total{model=\"%s\"} %.3f\n", d->smodels[i].name,
            (double)daemon_held_ms(d, (unsigned)i) / 1000);
    put(&t, "# TYPE vram_queue_length gauge\nvram_queue_length %zu\n", d->sched.nqueue);
    return t.p;
}
