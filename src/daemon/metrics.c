/* metrics: /metrics in Prometheus' text format (version 0.0.4): each GPU's
 * memory by part, each model's state, switches and their durations, the
 * proxy's requests by status with their times, the queue. Every family has
 * its HELP and TYPE and its samples together (what `promtool check
 * metrics` asks, and scrapers that read families whole rely on); model
 * names need no escaping in a label (core/modelname.h allows no quote,
 * backslash or newline: "Qwen/Qwen2.5-7B" and "llama3:8b" are as they are). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/acct.h"
#include "daemon/disktier.h"
#include "daemon/hostpool.h"
#include "daemon/loopwatch.h"
#include "daemon/metrics.h"
#include "proxy/proxy.h"

struct text {
    char *p;
    size_t n, cap;
};

static void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

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

static void family(struct text *t, const char *name, const char *type, const char *help)
{
    put(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One histogram's samples; labels: "model=\"m\"" (and more), never empty. */
static void hist_put(struct text *t, const char *name, const char *labels, const struct hist *h)
{
    uint64_t below = 0;
    for (unsigned b = 0; b < HIST_BUCKETS; b++) {
        below += h->in[b];
        put(t, "%s_bucket{%s,le=\"%g\"} %llu\n", name, labels, hist_le[b],
            (unsigned long long)below);
    }
    put(t, "%s_bucket{%s,le=\"+Inf\"} %llu\n", name, labels, (unsigned long long)h->count);
    put(t, "%s_sum{%s} %.6f\n%s_count{%s} %llu\n", name, labels, h->sum, name, labels,
        (unsigned long long)h->count);
}

static void gpus(struct text *t, const struct daemon *d)
{
    family(t, "vram_gpu_memory_bytes", "gauge", "Where each GPU's memory went, by part.");
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
            put(t, "vram_gpu_memory_bytes{gpu=\"%zu\",part=\"%s\"} %llu\n", g, parts[k].part,
                (unsigned long long)parts[k].v);
    }
}

static void models(struct text *t, const struct daemon *d)
{
    size_t n = d->sched.nmodels;
    family(t, "vram_model_state", "gauge", "1 for the state each model is in.");
    for (size_t i = 0; i < n; i++)
        put(t, "vram_model_state{model=\"%s\",state=\"%s\"} 1\n", d->smodels[i].name,
            sched_state_name(d->smodels[i].state));
    family(t, "vram_model_vram_bytes", "gauge", "What each model needs on its GPUs.");
    for (size_t i = 0; i < n; i++)
        put(t, "vram_model_vram_bytes{model=\"%s\"} %llu\n", d->smodels[i].name,
            (unsigned long long)d->smodels[i].need);
    family(t, "vram_model_transitions_total", "counter",
           "Starts, suspends (swaps out), resumes (swaps in) and restarts after a crash.");
    for (size_t i = 0; i < n; i++) {
        const struct dmodel *m = &d->dm[i];
        const char *nm = d->smodels[i].name;
        put(t,
            "vram_model_transitions_total{model=\"%s\",kind=\"start\"} %u\n"
            "vram_model_transitions_total{model=\"%s\",kind=\"suspend\"} %u\n"
            "vram_model_transitions_total{model=\"%s\",kind=\"resume\"} %u\n"
            "vram_model_transitions_total{model=\"%s\",kind=\"restart\"} %u\n",
            nm, m->starts, nm, m->suspends, nm, m->resumes, nm, m->restarts);
    }
    family(t, "vram_model_transition_seconds", "histogram",
           "How long each start, suspend and resume took.");
    for (size_t i = 0; i < n; i++) {
        const struct dmodel *m = &d->dm[i];
        const struct {
            const char *kind;
            const struct hist *h;
        } k[] = {{"start", &m->start_h}, {"suspend", &m->suspend_h}, {"resume", &m->resume_h}};
        for (size_t j = 0; j < 3; j++) {
            char labels[MODELNAME_MAX + 32];
            snprintf(labels, sizeof labels, "model=\"%s\",kind=\"%s\"", d->smodels[i].name,
                     k[j].kind);
            hist_put(t, "vram_model_transition_seconds", labels, k[j].h);
        }
    }
    family(t, "vram_model_last_seconds", "gauge",
           "The last start, suspend and resume, and the last request's time to its first byte.");
    for (size_t i = 0; i < n; i++) {
        const struct dmodel *m = &d->dm[i];
        const char *nm = d->smodels[i].name;
        put(t,
            "vram_model_last_seconds{model=\"%s\",kind=\"start\"} %.3f\n"
            "vram_model_last_seconds{model=\"%s\",kind=\"suspend\"} %.3f\n"
            "vram_model_last_seconds{model=\"%s\",kind=\"resume\"} %.3f\n"
            "vram_model_last_seconds{model=\"%s\",kind=\"first_byte\"} %.3f\n",
            nm, m->last_start_s, nm, m->last_suspend_s, nm, m->last_resume_s, nm,
            proxy_last_ttfb(d->proxy, (unsigned)i));
    }
    family(t, "vram_model_inflight", "gauge", "Proxied requests each model is answering now.");
    for (size_t i = 0; i < n; i++)
        put(t, "vram_model_inflight{model=\"%s\"} %u\n", d->smodels[i].name,
            proxy_inflight(d->proxy, (unsigned)i));
    family(t, "vram_model_preemptions_total", "counter",
           "Times a model was suspended mid-request for another (time slices).");
    for (size_t i = 0; i < n; i++)
        put(t, "vram_model_preemptions_total{model=\"%s\"} %u\n", d->smodels[i].name,
            d->smodels[i].preemptions);
    family(t, "vram_model_held_seconds_total", "counter",
           "Time a model's requests waited while it was preempted.");
    for (size_t i = 0; i < n; i++)
        put(t, "vram_model_held_seconds_total{model=\"%s\"} %.3f\n", d->smodels[i].name,
            (double)daemon_held_ms(d, (unsigned)i) / 1000);
}

/* The proxy's requests, by model (none without listen =). */
static void requests(struct text *t, const struct daemon *d)
{
    if (!d->proxy)
        return;
    size_t n = d->sched.nmodels;
    family(t, "vram_requests_total", "counter",
           "Proxied requests by model and status (499: the client left first).");
    for (size_t i = 0; i < n; i++) {
        const struct proxy_stats *st = proxy_stats(d->proxy, (unsigned)i);
        for (unsigned k = 0; k < st->ncodes; k++)
            put(t, "vram_requests_total{model=\"%s\",code=\"%d\"} %llu\n", d->smodels[i].name,
                st->codes[k].code, (unsigned long long)st->codes[k].n);
    }
    static const char *const name[] = {"vram_request_first_byte_seconds",
                                       "vram_request_duration_seconds"};
    static const char *const help[] = {
        "From a proxied request to the first byte of its answer, waiting for the model included.",
        "From a proxied request to the end of its answer."};
    for (size_t j = 0; j < 2; j++) {
        family(t, name[j], "histogram", help[j]);
        for (size_t i = 0; i < n; i++) {
            const struct proxy_stats *st = proxy_stats(d->proxy, (unsigned)i);
            char labels[MODELNAME_MAX + 16];
            snprintf(labels, sizeof labels, "model=\"%s\"", d->smodels[i].name);
            hist_put(t, name[j], labels, j == 0 ? &st->first_byte : &st->total);
        }
    }
}

/* How late the loop ran (every request waits that long), and the host
 * memory fast swap holds. */
static void loop_and_pool(struct text *t, const struct daemon *d)
{
    const struct loopwatch_stats *lw = loopwatch_stats();
    family(t, "vram_loop_lag_seconds", "histogram",
           "How late the daemon's loop ran a timer due every 50 ms (requests wait as long).");
    uint64_t below = 0;
    for (unsigned b = 0; b < HIST_BUCKETS; b++) {
        below += lw->lag.in[b];
        put(t, "vram_loop_lag_seconds_bucket{le=\"%g\"} %llu\n", hist_le[b],
            (unsigned long long)below);
    }
    put(t, "vram_loop_lag_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)lw->lag.count);
    put(t, "vram_loop_lag_seconds_sum %.6f\nvram_loop_lag_seconds_count %llu\n", lw->lag.sum,
        (unsigned long long)lw->lag.count);
    if (!d->pool)
        return;
    struct hostpool_stats st;
    hostpool_stats(d->pool, &st);
    family(t, "vram_host_pool_bytes", "gauge",
           "Host memory fast swap holds: held by models (suspended, or readied ahead), spare "
           "(populated, ready for the next suspend), filling, freeing; and its limit.");
    put(t,
        "vram_host_pool_bytes{part=\"held\"} %llu\nvram_host_pool_bytes{part=\"spare\"} %llu\n"
        "vram_host_pool_bytes{part=\"filling\"} %llu\nvram_host_pool_bytes{part=\"freeing\"} "
        "%llu\nvram_host_pool_bytes{part=\"limit\"} %llu\n",
        (unsigned long long)st.given, (unsigned long long)st.spare,
        (unsigned long long)st.filling, (unsigned long long)st.freeing,
        (unsigned long long)st.limit);
    family(t, "vram_host_pool_bytes_total", "counter",
           "Host memory fast swap's pool populated (made) and freed since the daemon started.");
    put(t, "vram_host_pool_bytes_total{op=\"made\"} %llu\nvram_host_pool_bytes_total{op=\"freed\"} %llu\n",
        (unsigned long long)st.made, (unsigned long long)st.freed);
    family(t, "vram_model_host_pool_bytes", "gauge",
           "Host memory for fast swap each model holds (its suspended bytes, or readied ahead).");
    for (size_t i = 0; i < d->sched.nmodels; i++)
        if (!d->dm[i].removed)
            put(t, "vram_model_host_pool_bytes{model=\"%s\"} %llu\n", d->smodels[i].name,
                (unsigned long long)hostpool_given(d->pool, (unsigned)i));
    family(t, "vram_host_pool_charged_bytes", "gauge",
           "Host memory models suspended by the driver's checkpoint hold, within host_budget.");
    put(t, "vram_host_pool_charged_bytes %llu\n", (unsigned long long)st.charged);
    if (!d->disk)
        return;
    family(t, "vram_disk_tier_bytes", "gauge",
           "The disk tier: what suspended models hold in spill files (used), and spill_budget.");
    put(t, "vram_disk_tier_bytes{part=\"used\"} %llu\nvram_disk_tier_bytes{part=\"budget\"} %llu\n",
        (unsigned long long)disktier_used(d->disk), (unsigned long long)disktier_budget(d->disk));
    family(t, "vram_model_disk_bytes", "gauge",
           "What each suspended model holds in its spill file (the disk tier).");
    for (size_t i = 0; i < d->sched.nmodels; i++)
        if (!d->dm[i].removed)
            put(t, "vram_model_disk_bytes{model=\"%s\"} %llu\n", d->smodels[i].name,
                (unsigned long long)disktier_held(d->disk, (unsigned)i));
}

char *metrics_render(const struct daemon *d)
{
    struct text t = {malloc(16384), 0, 16384};
    if (!t.p)
        return NULL;
    t.p[0] = '\0';
    family(&t, "vram_build_info", "gauge", "The version of vram serving these metrics.");
    put(&t, "vram_build_info{version=\"%s\"} 1\n", VRAM_VERSION);
    gpus(&t, d);
    models(&t, d);
    requests(&t, d);
    family(&t, "vram_queue_length", "gauge", "Demands waiting for the scheduler.");
    put(&t, "vram_queue_length %zu\n", d->sched.nqueue);
    loop_and_pool(&t, d);
    return t.p;
}
