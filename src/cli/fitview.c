/* fitview: `vram fit`'s answers. A row per precision with the parts that
 * add up to the total and the GPUs it fits on, then what follows from it
 * (what vram serve measured, llama.cpp's layers, vLLM's fraction, what would
 * make room); with several models, the plan: who lives with whom, who takes
 * turns; with none, a row per local model. */
#include "cli/fitview.h"

#include <string.h>

#include "core/units.h"

static const char *const runtimes[] = {"torch", "llamacpp", "vllm"};

static const char *gib(uint64_t b, char *buf, size_t len)
{
    double g = (double)b / UNITS_GiB;
    snprintf(buf, len, g < 10 ? "%.2f GiB" : "%.1f GiB", g);
    return buf;
}

static void fits_text(FILE *out, const struct fit_report *r, const struct fit_model *fm, int k)
{
    char b[32];
    if (!r->have_gpus) {
        fprintf(out, "n/a (no GPU here: --vram SIZE)");
        return;
    }
    int yes = 0;
    for (size_t g = 0; g < r->ngpus; g++)
        if (fitview_need(fm, k, g) <= r->gpus[g].free)
            fprintf(out, "%sGPU %u", yes++ ? ", " : "", r->gpus[g].index);
    bool first_no = true;
    for (size_t g = 0; g < r->ngpus; g++)
        if (fitview_need(fm, k, g) > r->gpus[g].free) {
            fprintf(out, "%s%sGPU %u (%s free)", yes ? "; " : "", first_no ? "not " : "",
                    r->gpus[g].index, gib(r->gpus[g].free, b, sizeof b));
            first_no = false;
            yes = 1;
        }
}

/* "suspending qwen7b (vram suspend qwen7b)" / "stopping PID 4242 python
 * (6.0 GiB)": what make_room chose. */
static void room_text(FILE *out, const struct fit_report *r, const struct fit_model *fm)
{
    const struct fit_gpu *g = &r->gpus[fm->room_gpu];
    char b[32];
    int n = 0;
    for (size_t i = 0; i < g->nholders; i++)
        if (fm->room_free[i] && g->holders[i].served)
            fprintf(out, "%s%s (vram serve, %s)", n++ ? ", " : "suspending ", g->holders[i].name,
                    gib(g->holders[i].bytes, b, sizeof b));
    int m = 0;
    for (size_t i = 0; i < g->nholders; i++)
        if (fm->room_free[i] && !g->holders[i].served)
            fprintf(out, "%s%s PID %u%s%s (%s)", m++ ? ", " : "", n ? "; stopping" : "stopping",
                    g->holders[i].pid, g->holders[i].name[0] ? " " : "", g->holders[i].name,
                    gib(g->holders[i].bytes, b, sizeof b));
}

static void plans_text(FILE *out, const struct fit_report *r, const struct fit_model *fm)
{
    char b[3][32];
    if (fm->learned_as[0])
        for (size_t g = 0; g < r->ngpus; g++)
            if (fm->learned[g]) {
                fprintf(out, "  measured by vram serve (as %s) on %s: %s\n", fm->learned_as,
                        r->gpus[g].name, gib(fm->learned[g], b[0], 32));
                break;
            }
    if (fm->ngl_gpu >= 0) {
        const struct fit_gpu *g = &r->gpus[fm->ngl_gpu];
        unsigned all = fm->est[0].gpu_layers;
        fprintf(out, "  llama.cpp on GPU %u (%s free): ", g->index, gib(g->free, b[0], 32));
        if (fm->ngl_fit < 0)
            fprintf(out, "not even -ngl 0 fits at %llu tokens",
                    (unsigned long long)r->opts.ctx);
        else if ((unsigned)fm->ngl_fit >= all && r->opts.ngl < 0)
            fprintf(out, "all %u layers fit at %llu tokens", all, (unsigned long long)r->opts.ctx);
        else
            fprintf(out, "-ngl %d of %u fits at %llu tokens (%s)", fm->ngl_fit,
                    fm->info.layers + 1, (unsigned long long)r->opts.ctx,
                    gib(fm->ngl_est.total, b[1], 32));
        if (fm->ctx_fit)
            fprintf(out, "; all layers up to %llu tokens", (unsigned long long)fm->ctx_fit);
        else
            fprintf(out, "; all layers do not fit even at 256 tokens");
        fputc('\n', out);
    }
    if (fm->runtime == ESTIMATE_VLLM && !r->opts.train) {
        for (size_t g = 0; g < r->ngpus; g++)
            fprintf(out,
                    "  vLLM on GPU %u: --gpu-memory-utilization %.2f (the most beside what runs) "
                    "leaves KV cache for %llu tokens; %llu tokens need %.2f\n",
                    r->gpus[g].index, fm->util_max[g], (unsigned long long)fm->kv_tokens[g],
                    (unsigned long long)r->opts.ctx, fm->util_need);
        fprintf(out, "  (vLLM: computed from its documented rules, not measured)\n");
    }
    for (int kind = 0; r->split_gpus > 1 && fm->nest && kind < 2; kind++) {
        const struct estimate_result *e = &fm->split[kind];
        fprintf(out, "  over %u GPUs, %s split (%s): %s on the fullest GPU (weights %s, kv cache %s)",
                r->split_gpus, split_name((enum split_kind)kind),
                kind == SPLIT_TENSOR ? "vLLM/SGLang --tensor-parallel-size, llama.cpp -sm row"
                                     : "llama.cpp -sm layer, a device_map",
                gib(e->total, b[0], 32), gib(e->weights, b[1], 32), gib(e->kv_cache, b[2], 32));
        if (r->have_gpus)
            fprintf(out, "; %s now (%u of %zu GPUs have room for a share)",
                    fm->split_room[kind] >= r->split_gpus ? "fits" : "does not fit",
                    fm->split_room[kind], r->ngpus);
        fputc('\n', out);
    }
    if (!r->have_gpus || r->nmodels != 1)
        return;
    switch (fm->verdict) {
    case FIT_NOW:
        fprintf(out, "  best that fits: %s%s", fm->est[fm->best].prec.name,
                !fm->est[fm->best].prec.stored               ? ""
                : fm->source && !strcmp(fm->source, "the hub") ? ", the file named"
                                                               : ", what is on disk");
        if (fm->better >= 0)
            fprintf(out, " (%s fits too: another download)", fm->est[fm->better].prec.name);
        fputc('\n', out);
        break;
    case FIT_PARTIAL:
        fprintf(out,
                "  fits now with -ngl %d of %u on GPU %u (the other layers on the CPU, slower)",
                fm->ngl_fit, fm->info.layers + 1, r->gpus[fm->ngl_gpu].index);
        if (fm->room_gpu >= 0) {
            fprintf(out, "; every layer on GPU %u after ", r->gpus[fm->room_gpu].index);
            room_text(out, r, fm);
        } else if (fm->ctx_fit) {
            fprintf(out, "; every layer with --ctx %llu", (unsigned long long)fm->ctx_fit);
        }
        fputc('\n', out);
        break;
    case FIT_AFTER_ROOM:
        fprintf(out, "  fits nowhere now; on GPU %u after ", r->gpus[fm->room_gpu].index);
        room_text(out, r, fm);
        fputc('\n', out);
        break;
    default:
        fprintf(out, "  fits nowhere\n");
    }
}

static void model_text(FILE *out, const struct fit_report *r, const struct fit_model *fm)
{
    char b[6][32];
    const struct model_info *m = &fm->info;
    fprintf(out, "%s (%s, %.2f B params", m->name, m->arch, (double)m->params / 1e9);
    if (m->experts)
        fprintf(out, ", %.2f B active", (double)m->params_active / 1e9);
    fprintf(out, ", stored %s", m->stored[0] ? m->stored : "n/a");
    if (fm->source && strcmp(fm->source, "file") && strcmp(fm->source, "shape"))
        fprintf(out, ", %s", fm->source);
    bool hub = fm->source && !strcmp(fm->source, "the hub");
    if (fm->disk && fm->source && strcmp(fm->source, "file"))
        fprintf(out, ", %s %s", gib(fm->disk, b[0], 32), hub ? "to download" : "on disk");
    fprintf(out, ")   %s, %s %llu tokens%s\n", runtimes[fm->runtime],
            r->opts.train ? "training, seq" : "context",
            (unsigned long long)(r->opts.train ? r->opts.seq : r->opts.ctx),
            fm->runtime == ESTIMATE_VLLM ? " (computed, not measured)" : "");
    fprintf(out, "  %-18s %10s %10s %12s %10s %10s   %s\n", "",
            fm->runtime == ESTIMATE_LLAMACPP ? "on GPU" : "weights",
            r->opts.train ? "grads+opt" : "kv cache", "activations", "runtime", "total", "fits on");
    for (int k = 0; k < fm->nest; k++) {
        const struct estimate_result *e = &fm->est[k];
        fprintf(out, "  %-18s %10s %10s %12s %10s %10s   ", e->prec.name,
                gib(e->weights, b[0], 32),
                gib(r->opts.train ? e->gradients + e->optimizer : e->kv_cache, b[1], 32),
                gib(e->activations, b[2], 32), gib(e->runtime, b[3], 32), gib(e->total, b[4], 32));
        fits_text(out, r, fm, k);
        fputc('\n', out);
    }
    plans_text(out, r, fm);
}

/* vram fit with no model: one row per local model. */
static void listing_text(FILE *out, const struct fit_report *r)
{
    char b[3][32];
    if (!r->nmodels) {
        fprintf(out, "no local models found in %s\n", r->where);
        return;
    }
    fprintf(out, "%-44s %-11s %9s %10s %-8s  %s\n", "model", "store", "on disk", "needs",
            "runtime", "fits");
    for (size_t i = 0; i < r->nmodels; i++) {
        const struct fit_model *fm = &r->models[i];
        fprintf(out, "%-44s %-11s %9s ", fm->info.name, fm->source,
                fm->disk ? gib(fm->disk, b[0], 32) : "?");
        if (fm->error[0]) {
            fprintf(out, "%10s %-8s  unreadable: %s\n", "-", "-", fm->error);
            continue;
        }
        bool learned = false;
        for (size_t g = 0; g < r->ngpus; g++)
            learned |= fm->learned[g] != 0;
        uint64_t need = fm->est[0].total;
        for (size_t g = 0; g < r->ngpus && learned; g++)
            if (fm->learned[g])
                need = fm->learned[g];
        fprintf(out, "%10s %-8s  ", gib(need, b[1], 32), runtimes[fm->runtime]);
        if (!r->have_gpus) {
            fprintf(out, "n/a (no GPU here: --vram SIZE)\n");
            continue;
        }
        int yes = 0;
        for (size_t g = 0; g < r->ngpus; g++)
            if (fitview_need(fm, 0, g) <= r->gpus[g].free)
                fprintf(out, "%sGPU %u", yes++ ? ", " : "now: ", r->gpus[g].index);
        if (!yes && fm->verdict == FIT_PARTIAL) {
            fprintf(out, "now: GPU %u with -ngl %d of %u", r->gpus[fm->ngl_gpu].index, fm->ngl_fit,
                    fm->info.layers + 1);
        } else if (!yes && fm->room_gpu >= 0) {
            fprintf(out, "on GPU %u after ", r->gpus[fm->room_gpu].index);
            room_text(out, r, fm);
        } else if (!yes) {
            uint64_t most = 0;
            for (size_t g = 0; g < r->ngpus; g++)
                most = r->gpus[g].total > most ? r->gpus[g].total : most;
            fprintf(out, "no: the largest GPU has %s", gib(most, b[2], 32));
        }
        fprintf(out, "%s\n", learned ? " (measured by vram serve)" : "");
    }
    fprintf(out, "\n(at %llu tokens of context; looked in %s)\n", (unsigned long long)r->opts.ctx,
            r->where);
}

void fitview_text(FILE *out, const struct fit_report *r)
{
    char b[32];
    if (r->listing) {
        listing_text(out, r);
        return;
    }
    for (size_t i = 0; i < r->nmodels; i++) {
        if (i)
            fputc('\n', out);
        model_text(out, r, &r->models[i]);
    }
    if (r->nmodels < 2 || !r->have_gpus)
        return;
    fprintf(out, "\nplan (each model at the best precision that fits):\n");
    for (size_t g = 0; g < r->ngpus; g++) {
        int n = 0;
        for (size_t i = 0; i < r->nmodels; i++)
            if (r->plan.gpu_of[i] == (int)g && r->models[i].best >= 0) {
                if (!n++)
                    fprintf(out, "  together on GPU %u: ", r->gpus[g].index);
                else
                    fprintf(out, ", ");
                fprintf(out, "%s (%s)", r->models[i].info.name,
                        r->models[i].est[r->models[i].best].prec.name);
            }
        if (n)
            fprintf(out, "   (%s left)\n", gib(r->plan.room_left[g], b, 32));
    }
    for (size_t i = 0; i < r->nmodels; i++) {
        const struct fit_model *fm = &r->models[i];
        if (r->plan.gpu_of[i] >= 0)
            continue;
        if (fm->verdict == FIT_PARTIAL)
            fprintf(out, "  takes turns: %s (alone only with -ngl %d of %u, the rest on the CPU)\n",
                    fm->info.name, fm->ngl_fit, fm->info.layers + 1);
        else
            fprintf(out, "  takes turns: %s%s\n", fm->info.name,
                    fm->best < 0 ? " (fits on no GPU even alone)"
                                 : " (fits alone, not beside the others)");
    }
}

static json_t *estimate_json(const struct fit_report *r, const struct fit_model *fm, int k)
{
    const struct estimate_result *e = &fm->est[k];
    json_t *fits = json_array();
    for (size_t g = 0; g < r->ngpus && r->have_gpus; g++)
        if (fitview_need(fm, k, g) <= r->gpus[g].free)
            json_array_append_new(fits, json_integer(r->gpus[g].index));
    json_t *o =
        json_pack("{s:s, s:f, s:I, s:I, s:I, s:I, s:I, s:o}", "precision", e->prec.name, "bits",
                  e->prec.bits, "weights", (json_int_t)e->weights, "kv_cache",
                  (json_int_t)e->kv_cache, "activations", (json_int_t)e->activations, "runtime",
                  (json_int_t)e->runtime, "total", (json_int_t)e->total, "fits", fits);
    if (r->opts.train) {
        json_object_set_new(o, "gradients", json_integer((json_int_t)e->gradients));
        json_object_set_new(o, "optimizer", json_integer((json_int_t)e->optimizer));
    }
    if (fm->runtime == ESTIMATE_LLAMACPP)
        json_object_set_new(o, "gpu_layers", json_integer(e->gpu_layers));
    if (fm->runtime == ESTIMATE_TORCH && !r->opts.train)
        json_object_set_new(o, "kept_from_load", json_integer((json_int_t)e->kept_from_load));
    return o;
}

/* What would make room: {gpu, suspend: [names], stop: [{pid, name, bytes}]}. */
static json_t *room_json(const struct fit_report *r, const struct fit_model *fm)
{
    if (fm->room_gpu < 0)
        return json_null();
    const struct fit_gpu *g = &r->gpus[fm->room_gpu];
    json_t *suspend = json_array(), *stop = json_array();
    for (size_t i = 0; i < g->nholders; i++) {
        const struct fit_holder *h = &g->holders[i];
        if (!fm->room_free[i])
            continue;
        if (h->served)
            json_array_append_new(suspend, json_string(h->name));
        else
            json_array_append_new(stop, json_pack("{s:i, s:s, s:I}", "pid", (int)h->pid, "name",
                                                  h->name, "bytes", (json_int_t)h->bytes));
    }
    return json_pack("{s:i, s:o, s:o}", "gpu", g->index, "suspend", suspend, "stop", stop);
}

static json_t *model_json(const struct fit_report *r, const struct fit_model *fm)
{
    const struct model_info *m = &fm->info;
    json_t *ests = json_array(), *learned = json_array();
    for (int k = 0; k < fm->nest; k++)
        json_array_append_new(ests, estimate_json(r, fm, k));
    for (size_t g = 0; g < r->ngpus && fm->learned_as[0]; g++)
        if (fm->learned[g])
            json_array_append_new(learned, json_pack("{s:i, s:s, s:I}", "gpu", r->gpus[g].index,
                                                     "as", fm->learned_as, "bytes",
                                                     (json_int_t)fm->learned[g]));
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:I, s:s, s:I, s:I, s:s, s:I, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:o, "
        "s:o, s:o, s:o}",
        "name", m->name, "source", fm->source ? fm->source : "file", "runtime",
        runtimes[fm->runtime], "disk", (json_int_t)fm->disk, "arch", m->arch, "params",
        (json_int_t)m->params, "params_active", (json_int_t)m->params_active, "stored", m->stored,
        "weight_bytes", (json_int_t)m->weight_bytes, "layers", m->layers, "hidden", m->hidden,
        "heads", m->heads, "kv_heads", m->kv_heads, "head_dim", m->head_dim, "ff", m->ff, "vocab",
        m->vocab, "estimates", ests, "best",
        fm->best >= 0 ? json_string(fm->est[fm->best].prec.name) : json_null(), "learned",
        learned, "make_room", room_json(r, fm));
    static const char *const verdicts[] = {"unknown", "fits", "partial", "after_making_room",
                                           "nowhere"};
    json_object_set_new(o, "verdict", json_string(verdicts[fm->verdict]));
    if (r->split_gpus > 1 && fm->nest) {
        json_t *sp = json_object();
        json_object_set_new(sp, "gpus", json_integer(r->split_gpus));
        for (int kind = 0; kind < 2; kind++) {
            const struct estimate_result *e = &fm->split[kind];
            json_object_set_new(
                sp, split_name((enum split_kind)kind),
                json_pack("{s:I, s:I, s:I, s:I, s:I, s:i, s:b}", "total", (json_int_t)e->total,
                          "weights", (json_int_t)e->weights, "kv_cache", (json_int_t)e->kv_cache,
                          "activations", (json_int_t)e->activations, "runtime",
                          (json_int_t)e->runtime, "gpus_with_room", fm->split_room[kind],
                          "fits_now", r->have_gpus && fm->split_room[kind] >= r->split_gpus));
        }
        json_object_set_new(o, "split", sp);
    }
    if (fm->ngl_gpu >= 0)
        json_object_set_new(o, "llamacpp",
                            json_pack("{s:i, s:i, s:i, s:I, s:I}", "gpu",
                                      r->gpus[fm->ngl_gpu].index, "all_layers",
                                      fm->est[0].gpu_layers, "ngl_fits", fm->ngl_fit, "ctx",
                                      (json_int_t)r->opts.ctx, "ctx_all_layers",
                                      (json_int_t)fm->ctx_fit));
    if (fm->runtime == ESTIMATE_VLLM && r->have_gpus && !r->opts.train) {
        json_t *per = json_array();
        for (size_t g = 0; g < r->ngpus; g++)
            json_array_append_new(per, json_pack("{s:i, s:f, s:I}", "gpu", r->gpus[g].index,
                                                 "gpu_memory_utilization", fm->util_max[g],
                                                 "kv_tokens", (json_int_t)fm->kv_tokens[g]));
        json_object_set_new(o, "vllm",
                            json_pack("{s:o, s:f, s:b}", "gpus", per, "utilization_for_ctx",
                                      fm->util_need, "computed", 1));
    }
    return o;
}

json_t *fitview_json(const struct fit_report *r)
{
    json_t *models = json_array(), *gpus = json_array();
    for (size_t i = 0; i < r->nmodels; i++) {
        const struct fit_model *fm = &r->models[i];
        if (fm->error[0])
            json_array_append_new(models, json_pack("{s:s, s:s, s:I, s:s}", "name", fm->info.name,
                                                    "source", fm->source, "disk",
                                                    (json_int_t)fm->disk, "error", fm->error));
        else
            json_array_append_new(models, model_json(r, fm));
    }
    for (size_t g = 0; g < r->ngpus && r->have_gpus; g++)
        json_array_append_new(gpus, json_pack("{s:i, s:s, s:I, s:I}", "index", r->gpus[g].index,
                                              "name", r->gpus[g].name, "free",
                                              (json_int_t)r->gpus[g].free, "total",
                                              (json_int_t)r->gpus[g].total));
    json_t *plan = json_null();
    if (r->nmodels > 1 && r->have_gpus && !r->listing) {
        json_t *together = json_array(), *turns = json_array();
        for (size_t g = 0; g < r->ngpus; g++) {
            json_t *names = json_array();
            for (size_t i = 0; i < r->nmodels; i++)
                if (r->plan.gpu_of[i] == (int)g)
                    json_array_append_new(names, json_string(r->models[i].info.name));
            if (json_array_size(names))
                json_array_append_new(together, json_pack("{s:i, s:o, s:I}", "gpu",
                                                          r->gpus[g].index, "models", names, "left",
                                                          (json_int_t)r->plan.room_left[g]));
            else
                json_decref(names);
        }
        for (size_t i = 0; i < r->nmodels; i++)
            if (r->plan.gpu_of[i] < 0)
                json_array_append_new(turns, json_string(r->models[i].info.name));
        plan = json_pack("{s:o, s:o}", "together", together, "take_turns", turns);
    }
    return json_pack("{s:{s:s, s:b, s:I, s:I, s:I, s:i, s:b}, s:o, s:o, s:o, s:b}", "options",
                     "runtime", r->runtime_set ? runtimes[r->opts.runtime] : "auto", "train",
                     r->opts.train, "ctx", (json_int_t)r->opts.ctx, "batch",
                     (json_int_t)r->opts.batch, "seq", (json_int_t)r->opts.seq, "ngl", r->opts.ngl,
                     "flash_attn", !r->opts.no_flash_attn, "gpus", gpus, "models", models, "plan",
                     plan, "listing", r->listing);
}
