/* hfconfig: a Hugging Face config.json read into a model_info.
 *
 * Key names differ a little between families (num_local_experts for
 * Mixtral, num_experts for Qwen MoE, head_dim given or implied); multimodal
 * models nest the language model under "text_config". Sliding windows: all
 * layers for Mistral-style configs, every other layer for Gemma 2, five of
 * six for Gemma 3, none when a Qwen config says use_sliding_window=false. */
#include "model/hfconfig.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "core/err.h"

static unsigned uint_of(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 100000000)
        return 0;
    return (unsigned)json_integer_value(v);
}

static int from_json(json_t *root, const char *name, struct model_info *m, char *err, size_t errlen)
{
    if (!json_is_object(root)) {
        snprintf(err, errlen, "%s: not a config.json (the top level is not an object)", name);
        return VRAM_EINPUT;
    }
    json_t *c = json_object_get(root, "text_config");
    if (!json_is_object(c))
        c = root;
    const char *type = json_string_value(json_object_get(c, "model_type"));
    if (!type)
        type = json_string_value(json_object_get(root, "model_type"));
    snprintf(m->arch, sizeof m->arch, "%s", type ? type : "unknown");
    m->hidden = uint_of(c, "hidden_size");
    m->layers = uint_of(c, "num_hidden_layers");
    m->heads = uint_of(c, "num_attention_heads");
    m->kv_heads = uint_of(c, "num_key_value_heads");
    m->head_dim = uint_of(c, "head_dim");
    m->ff = uint_of(c, "intermediate_size");
    m->vocab = uint_of(c, "vocab_size");
    m->max_ctx = uint_of(c, "max_position_embeddings");
    m->experts = uint_of(c, "num_local_experts");
    if (!m->experts)
        m->experts = uint_of(c, "num_experts");
    m->experts_used = uint_of(c, "num_experts_per_tok");
    if (m->experts && uint_of(c, "moe_intermediate_size"))
        m->ff = uint_of(c, "moe_intermediate_size");
    json_t *tie = json_object_get(c, "tie_word_embeddings");
    if (!tie)
        tie = json_object_get(root, "tie_word_embeddings");
    /* transformers' default is to tie */
    m->tied_embeddings = tie ? json_is_true(tie) : true;
    m->sliding_window = uint_of(c, "sliding_window");
    json_t *use = json_object_get(c, "use_sliding_window");
    if (use && json_is_false(use))
        m->sliding_window = 0;
    if (m->sliding_window) {
        if (!strcmp(m->arch, "gemma2"))
            m->sliding_layers = m->layers / 2;
        else if (!strncmp(m->arch, "gemma3", 6))
            m->sliding_layers = m->layers - m->layers / 6;
        else
            m->sliding_layers = m->layers;
    }
    const char *dt = json_string_value(json_object_get(root, "torch_dtype"));
    if (!dt)
        dt = json_string_value(json_object_get(root, "dtype"));
    if (dt) {
        bool f32 = !strcmp(dt, "float32");
        snprintf(m->stored, sizeof m->stored, "%s",
                 f32                      ? "fp32"
                 : !strcmp(dt, "float16") ? "fp16"
                                          : "bf16");
        m->stored_bits = f32 ? 32 : 16;
    }
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

static int finish(json_t *root, const json_error_t *je, const char *name, struct model_info *m,
                  char *err, size_t errlen)
{
    if (!root) {
        snprintf(err, errlen, "%s:%d:%d: %s", name, je->line, je->column, je->text);
        return VRAM_EINPUT;
    }
    int rc = from_json(root, name, m, err, errlen);
    json_decref(root);
    return rc;
}

int hfconfig_load(const char *path, struct model_info *m, char *err, size_t errlen)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    return finish(root, &je, path, m, err, errlen);
}

int hfconfig_parse(const char *text, size_t len, const char *name, struct model_info *m, char *err,
                   size_t errlen)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    return finish(root, &je, name, m, err, errlen);
}
