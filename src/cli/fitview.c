/* fitview: `vram fit`'s answers. A row per precision with the parts that
 * add up to the total and the GPUs it fits on; with several models, the
 * plan: who lives with whom, who takes turns. */
#include "cli/fitview.h"

#include <string.h>

#include "core/units.h"

static const char *gib(uint64_t b, char *buf, size_t len)
{
    double g = (double)b / UNITS_GiB;
    snprintf(buf, len, g < 10 ? "%.2f GiB" : "%.1f GiB", g);
    return buf;
}

static void fits_text(FILE *out, const struct fit_report *r, const struct estimate_result *e)
{
    char b[32];
    if (!r->have_gpus) {
        fprintf(out, "n/a (no GPU here: --vram SIZE)");
        return;
    }
    int yes = 0;
    for (size_t g = 0; g < r->ngpus; g++)
        if (e->total <= r->gpus[g].free)
            fprintf(out, "%sGPU %u", yes++ ? ", " : "", r->gpus[g].index);
    bool first_no = true;
    for (size_t g = 0; g < r->ngpus; g++)
        if (e->total > r->gpus[g].free) {
            fprintf(out, "%s%sGPU %u (%s free)", yes ? "; " : "", first_no ? "not " : "",
                    r->gpus[g].index, gib(r->gpus[g].free, b, sizeof b));
            first_no = false;
            yes = 1;
        }
}

void fitview_text(FILE *out, const struct fit_report *r)
{
    char b[6][32];
    const char *rt[] = {"torch", "llamacpp", "vllm"};
    for (size_t i = 0; i < r->nmodels; i++) {
        const struct fit_model *fm = &r->models[i];
        const struct model_info *m = &fm->info;
        if (i)
            fputc('\n', out);
        fprintf(out, "%s (%s, %.2f B params", m->name, m->arch, (double)m->params / 1e9);
        if (m->experts)
            fprintf(out, ", %.2f B active", (double)m->params_active / 1e9);
        fprintf(out, ", stored %s)   %s, %s %llu tokens%s\n", m->stored[0] ? m->stored : "n/a",
                rt[r->opts.runtime], r->opts.train ? "training, seq" : "context",
                (unsigned long long)(r->opts.train ? r->opts.seq : r->opts.ctx),
                r->opts.runtime == ESTIMATE_TORCH ? "" : " (profile not yet measured)");
        fprintf(out, "  %-18s %10s %10s %12s %10s %10s   %s\n", "", "weights",
                r->opts.train ? "grads+opt" : "kv cache", "activations", "runtime", "total",
                "fits on");
        for (int k = 0; k < fm->nest; k++) {
            const struct estimate_result *e = &fm->est[k];
            fprintf(
                out, "  %-18s %10s %10s %12s %10s %10s   ", e->prec.name, gib(e->weights, b[0], 32),
                gib(r->opts.train ? e->gradients + e->optimizer : e->kv_cache, b[1], 32),
                gib(e->activations, b[2], 32), gib(e->runtime, b[3], 32), gib(e->total, b[4], 32));
            fits_text(out, r, e);
            fputc('\n', out);
        }
        if (r->have_gpus && r->nmodels == 1)
            fprintf(out, fm->best >= 0 ? "  best that fits: %s\n" : "  fits nowhere%s\n",
                    fm->best >= 0 ? fm->est[fm->best].prec.name : "");
    }
    if (r->nmodels < 2 || !r->have_gpus)
        return;
    fprintf(out, "\nplan (each model at the best precision that fits):\n");
    for (size_t g = 0; g < r->ngpus; g++) {
        int n = 0;
        for (size_t i = 0; i < r->nmodels; i++)
            if (r->plan.gpu_of[i] == (int)g && r->models[i].best >= 0)
                fprintf(out, "%s%s (%s)",
                        n++ ? ", " : "  together on GPU %u: ", r->models[i].info.name,
                        r->models[i].est[r->models[i].best].prec.name);
        if (n)
            fprintf(out, "   (%s left)\n", gib(r->plan.room_left[g], b[0], 32));
    }
    for (size_t i = 0; i < r->nmodels; i++)
        if (r->plan.gpu_of[i] < 0)
            fprintf(out, "  takes turns: %s%s\n", r->models[i].info.name,
                    r->models[i].best < 0 ? " (fits on no GPU even alone)"
                                          : " (fits alone, not beside the others)");
}

static json_t *estimate_json(const struct fit_report *r, const struct estimate_result *e)
{
    json_t *fits = json_array();
    for (size_t g = 0; g < r->ngpus && r->have_gpus; g++)
        if (e->total <= r->gpus[g].free)
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
    return o;
}

json_t *fitview_json(const struct fit_report *r)
{
    json_t *models = json_array(), *gpus = json_array();
    for (size_t i = 0; i < r->nmodels; i++) {
        const struct fit_model *fm = &r->models[i];
        const struct model_info *m = &fm->info;
        json_t *ests = json_array();
        for (int k = 0; k < fm->nest; k++)
            json_array_append_new(ests, estimate_json(r, &fm->est[k]));
        json_array_append_new(
            models,
            json_pack("{s:s, s:s, s:I, s:I, s:s, s:I, s:i, s:i, s:i, s:i, s:i, s:i, s:i, "
                      "s:o, s:o}",
                      "name", m->name, "arch", m->arch, "params", (json_int_t)m->params,
                      "params_active", (json_int_t)m->params_active, "stored", m->stored,
                      "weight_bytes", (json_int_t)m->weight_bytes, "layers", m->layers, "hidden",
                      m->hidden, "heads", m->heads, "kv_heads", m->kv_heads, "head_dim",
                      m->head_dim, "ff", m->ff, "vocab", m->vocab, "estimates", ests, "best",
                      fm->best >= 0 ? json_string(fm->est[fm->best].prec.name) : json_null()));
    }
    for (size_t g = 0; g < r->ngpus && r->have_gpus; g++)
        json_array_append_new(gpus,
                              json_pack("{s:i, s:s, s:I}", "index", r->gpus[g].index, "name",
                                        r->gpus[g].name, "free", (json_int_t)r->gpus[g].free));
    json_t *plan = json_null();
    if (r->nmodels > 1 && r->have_gpus) {
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
    const char *rt[] = {"torch", "llamacpp", "vllm"};
    return json_pack("{s:{s:s, s:b, s:I, s:I, s:I}, s:o, s:o, s:o}", "options", "runtime",
                     rt[r->opts.runtime], "train", r->opts.train, "ctx", (json_int_t)r->opts.ctx,
                     "batch", (json_int_t)r->opts.batch, "seq", (json_int_t)r->opts.seq, "gpus",
                     gpus, "models", models, "plan", plan);
}
