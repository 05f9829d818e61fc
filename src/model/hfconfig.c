/* hfconfig: a Hugging Face config.json read into a model_info.
 *
 * Read as a stream (model/jscan.c), keeping only the members that shape the
 * model, at the top level and inside "text_config" (where multimodal models
 * nest the language model). Key names differ a little between families
 * (num_local_experts for Mixtral, num_experts for Qwen MoE, head_dim given or
 * implied). Sliding windows: all layers for Mistral-style configs, every
 * other layer for Gemma 2, five of six for Gemma 3, none when a Qwen config
 * says use_sliding_window=false. */
#include "model/hfconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/units.h"
#include "model/jscan.h"

static const char *const keys[] = {
    "hidden_size",           "num_hidden_layers", "num_attention_heads",
    "num_key_value_heads",   "head_dim",          "intermediate_size",
    "vocab_size",            "max_position_embeddings", "num_local_experts",
    "num_experts",           "num_experts_per_tok", "moe_intermediate_size",
    "sliding_window",
};
enum { HIDDEN, LAYERS, HEADS, KV_HEADS, HEAD_DIM, FF, VOCAB, MAX_POS, LOCAL_EXPERTS, EXPERTS,
       EXPERTS_USED, MOE_FF, SWA, NKEYS };

/* What one level (the top, or text_config) says. */
struct level {
    unsigned v[NKEYS];
    char type[32];
    int tie;         /* -1: not said */
    bool swa_off;    /* use_sliding_window: false */
    char dtype[16];  /* torch_dtype or dtype */
};

static unsigned whole(const struct jscan *j)
{
    return j->whole && j->num >= 0 && j->num <= 100000000 ? (unsigned)j->num : 0;
}

/* The members of an object whose '{' was just read, into l; "text_config"
 * into inner when inner is given. */
static enum jscan_tok members(struct jscan *j, struct level *l, struct level *inner, bool *nested)
{
    enum jscan_tok t;
    while ((t = jscan_next(j)) == JSCAN_KEY) {
        char key[64];
        snprintf(key, sizeof key, "%s", j->cut ? "" : j->str);
        t = jscan_next(j);
        if (t == JSCAN_ERR)
            return t;
        size_t k = 0;
        while (k < NKEYS && strcmp(key, keys[k]))
            k++;
        if (k < NKEYS && t == JSCAN_NUM)
            l->v[k] = whole(j);
        else if (!strcmp(key, "model_type") && t == JSCAN_STRING)
            snprintf(l->type, sizeof l->type, "%s", j->str);
        else if ((!strcmp(key, "torch_dtype") || (!strcmp(key, "dtype") && !l->dtype[0])) &&
                 t == JSCAN_STRING)
            snprintf(l->dtype, sizeof l->dtype, "%s", j->str);
        else if (!strcmp(key, "tie_word_embeddings") && (t == JSCAN_TRUE || t == JSCAN_FALSE))
            l->tie = t == JSCAN_TRUE;
        else if (!strcmp(key, "use_sliding_window") && t == JSCAN_FALSE)
            l->swa_off = true;
        else if (inner && !strcmp(key, "text_config") && t == JSCAN_OBJ) {
            *nested = true;
            if (members(j, inner, NULL, NULL) == JSCAN_ERR)
                return JSCAN_ERR;
        } else if (jscan_finish(j, t) == JSCAN_ERR)
            return JSCAN_ERR;
    }
    return t == JSCAN_OBJ_END ? t : JSCAN_ERR;
}

static void fill(struct model_info *m, const struct level *c, const struct level *root)
{
    const char *type = c->type[0] ? c->type : root->type[0] ? root->type : "unknown";
    snprintf(m->arch, sizeof m->arch, "%s", type);
    m->hidden = c->v[HIDDEN];
    m->layers = c->v[LAYERS];
    m->heads = c->v[HEADS];
    m->kv_heads = c->v[KV_HEADS];
    m->head_dim = c->v[HEAD_DIM];
    m->ff = c->v[FF];
    m->vocab = c->v[VOCAB];
    m->max_ctx = c->v[MAX_POS];
    m->experts = c->v[LOCAL_EXPERTS] ? c->v[LOCAL_EXPERTS] : c->v[EXPERTS];
    m->experts_used = c->v[EXPERTS_USED];
    if (m->experts && c->v[MOE_FF])
        m->ff = c->v[MOE_FF];
    int tie = c->tie >= 0 ? c->tie : root->tie;
    m->tied_embeddings = tie != 0; /* transformers' default is to tie */
    m->sliding_window = c->swa_off ? 0 : c->v[SWA];
    if (m->sliding_window) {
        if (!strcmp(m->arch, "gemma2"))
            m->sliding_layers = m->layers / 2;
        else if (!strncmp(m->arch, "gemma3", 6))
            m->sliding_layers = m->layers - m->layers / 6;
        else
            m->sliding_layers = m->layers;
    }
    const char *dt = root->dtype;
    if (dt[0]) {
        bool f32 = !strcmp(dt, "float32");
        snprintf(m->stored, sizeof m->stored, "%s",
                 f32 ? "fp32" : !strcmp(dt, "float16") ? "fp16" : "bf16");
        m->stored_bits = f32 ? 32 : 16;
    }
}

int hfconfig_parse(struct reader *r, const char *name, uint64_t limit, struct model_info *m,
                   char *err, size_t errlen)
{
    if (reader_left(r) > limit) {
        char b1[32], b2[32];
        snprintf(err, errlen,
                 "%s: %s is too big for a config.json (a model's is a few KiB; vram reads "
                 "up to %s)",
                 name, units_fmt_size(reader_left(r), b1, sizeof b1),
                 units_fmt_size(limit, b2, sizeof b2));
        return VRAM_EINPUT;
    }
    struct jscan *j = malloc(sizeof *j);
    if (!j)
        return VRAM_EFAIL;
    jscan_init(j, r);
    struct level root = {.tie = -1}, text = {.tie = -1};
    bool nested = false;
    enum jscan_tok t = jscan_next(j);
    if (t == JSCAN_OBJ)
        t = members(j, &root, &text, &nested);
    if (t == JSCAN_OBJ_END)
        t = jscan_next(j);
    int rc = VRAM_OK;
    if (t == JSCAN_ERR)
        snprintf(err, errlen, "%s: not valid JSON (%s)", name, j->err);
    else if (t != JSCAN_EOF)
        snprintf(err, errlen, "%s: not a config.json (the top level is not an object)", name);
    rc = t == JSCAN_EOF ? VRAM_OK : VRAM_EINPUT;
    free(j);
    if (rc != VRAM_OK)
        return rc;
    fill(m, nested ? &text : &root, &root);
    if (!m->hidden || !m->layers || !m->heads || !m->vocab || !m->ff) {
        snprintf(err, errlen,
                 "%s: not a decoder config vram knows: it needs hidden_size, "
                 "num_hidden_layers, num_attention_heads, intermediate_size and vocab_size",
                 name);
        return VRAM_EINPUT;
    }
    model_complete(m);
    if (!m->params)
        m->params = model_count_params(m, &m->params_active);
    return VRAM_OK;
}

struct job {
    struct model_info *m;
    char *err;
    size_t errlen;
};

static int parse_job(struct reader *r, const char *name, void *arg)
{
    struct job *jb = arg;
    return hfconfig_parse(r, name, HFCONFIG_MAX, jb->m, jb->err, jb->errlen);
}

int hfconfig_load(const char *path, struct model_info *m, char *err, size_t errlen)
{
    struct job jb = {m, err, errlen};
    return reader_parse_file(path, parse_job, &jb, err, errlen);
}
