/* fitmodel: everything is computed from the estimates (core/estimate.c,
 * core/llamacpp.c) and the GPUs' free memory now; vram serve's measured
 * footprint, where there is one, stands in for the estimate as stored. */
#include "cli/fitmodel.h"

#include <math.h>
#include <string.h>

#include "core/llamacpp.h"

uint64_t fitview_need(const struct fit_model *fm, int k, size_t g)
{
    return k == 0 && g < FITPLAN_MAX && fm->learned[g] ? fm->learned[g] : fm->est[k].total;
}

/* Nothing fits now: the GPU where the fewest holders make room. */
static void make_room(const struct fit_report *r, struct fit_model *fm)
{
    fm->room_gpu = -1;
    for (size_t g = 0; g < r->ngpus; g++) {
        const struct fit_gpu *gpu = &r->gpus[g];
        struct fitplan_holder h[FIT_MAX_HOLDERS];
        bool chosen[FIT_MAX_HOLDERS];
        for (size_t i = 0; i < gpu->nholders; i++)
            h[i] = (struct fitplan_holder){gpu->holders[i].bytes, gpu->holders[i].served};
        int n = fitplan_make_room(fitview_need(fm, 0, g), gpu->free, h, gpu->nholders, chosen);
        if (n > 0 && (fm->room_gpu < 0 || n < fm->room_count)) {
            fm->room_gpu = (int)g;
            fm->room_count = n;
            memcpy(fm->room_free, chosen, sizeof chosen);
        }
    }
}

static void llamacpp_plan(const struct fit_report *r, struct fit_model *fm, struct estimate_opts o)
{
    fm->ngl_gpu = -1;
    size_t best = 0;
    for (size_t g = 1; g < r->ngpus; g++)
        if (r->gpus[g].free > r->gpus[best].free)
            best = g;
    if (!r->ngpus)
        return;
    fm->ngl_gpu = (int)best;
    fm->ngl_fit = llamacpp_fit_layers(&fm->info, &o, &fm->est[0].prec, r->gpus[best].free,
                                      &fm->ngl_est);
    fm->ctx_fit = llamacpp_fit_ctx(&fm->info, &o, &fm->est[0].prec, r->gpus[best].free);
}

/* vLLM takes --gpu-memory-utilization of the whole card for itself, and
 * refuses to start when less than that is free; what it does not need for
 * weights, activations (its profiling run) and the rest becomes KV cache. */
static void vllm_plan(const struct fit_report *r, struct fit_model *fm, const struct estimate_opts *o)
{
    const struct estimate_result *e = &fm->est[0];
    const struct model_info *m = &fm->info;
    double kvb = (o->kv_bits > 0 ? o->kv_bits : e->prec.compute_bits) / 8;
    double per_token = 2.0 * m->layers * m->kv_heads * m->head_dim * kvb;
    double fixed = (double)e->weights + e->activations + e->runtime;
    fm->util_need = 0;
    for (size_t g = 0; g < r->ngpus; g++) {
        double total = (double)(r->gpus[g].total ? r->gpus[g].total : r->gpus[g].free);
        if (total <= 0 || per_token <= 0)
            continue;
        fm->util_max[g] = floor((double)r->gpus[g].free / total * 100) / 100;
        double kv = fm->util_max[g] * total - fixed;
        fm->kv_tokens[g] = kv > 0 ? (uint64_t)(kv / per_token) : 0;
        double need = ceil((fixed + (double)o->ctx * per_token) / total * 100) / 100;
        if (!g || need < fm->util_need)
            fm->util_need = need;
    }
}

/* Whether estimate k fits on some GPU now. */
static bool fm_fits(const struct fit_report *r, const struct fit_model *fm, int k)
{
    for (size_t g = 0; g < r->ngpus && r->have_gpus; g++)
        if (fitview_need(fm, k, g) <= r->gpus[g].free)
            return true;
    return false;
}

void fitmodel_answer(const struct fit_report *r, struct fit_model *fm, const char *only)
{
    struct estimate_opts o = r->opts;
    o.runtime = fm->runtime;
    struct estimate_precision precs[FIT_MAX_PREC];
    int n;
    if (only) {
        estimate_precision(only, &precs[0]);
        n = 1;
    } else {
        n = estimate_candidates(&fm->info, precs, FIT_MAX_PREC);
    }
    fm->nest = n;
    fm->best = -1;
    /* the best that fits: the most bits per weight on some GPU */
    for (int k = 0; k < n; k++) {
        estimate_compute(&fm->info, &o, &precs[k], &fm->est[k]);
        for (size_t g = 0; g < r->ngpus && r->have_gpus; g++)
            if (fitview_need(fm, k, g) <= r->gpus[g].free &&
                (fm->best < 0 || precs[k].bits > precs[fm->best].bits))
                fm->best = k;
    }
    /* a quantized file that fits as it is: that, not a precision that is
     * another download (the others are said beside it) */
    fm->better = -1;
    if (fm->best > 0 && precs[0].stored && fm_fits(r, fm, 0)) {
        fm->better = fm->best;
        fm->best = 0;
    }
    fm->room_gpu = fm->ngl_gpu = -1;
    for (int kind = 0; r->split_gpus > 1 && n && kind < 2; kind++) {
        split_compute(&fm->info, &fm->est[0], r->split_gpus, (enum split_kind)kind,
                      &fm->split[kind]);
        fm->split_room[kind] = 0;
        for (size_t g = 0; g < r->ngpus && r->have_gpus; g++)
            fm->split_room[kind] += fm->split[kind].total <= r->gpus[g].free;
    }
    fm->verdict = FIT_UNKNOWN;
    if (!r->have_gpus || !n)
        return;
    if (fm->best < 0)
        make_room(r, fm);
    if (!o.train && fm->runtime == ESTIMATE_LLAMACPP)
        llamacpp_plan(r, fm, o);
    else if (!o.train && fm->runtime == ESTIMATE_VLLM)
        vllm_plan(r, fm, &o);
    /* one answer: whole now; else llama.cpp's layers that fit now (at
     * least one: -ngl 0 is the CPU's model); else after making room */
    fm->verdict = fm->best >= 0                       ? FIT_NOW
                  : fm->ngl_gpu >= 0 && fm->ngl_fit >= 1 ? FIT_PARTIAL
                  : fm->room_gpu >= 0                 ? FIT_AFTER_ROOM
                                                      : FIT_NOWHERE;
}
