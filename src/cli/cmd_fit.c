/* cmd_fit: `vram fit`, will this model fit, at what precision, next to what
 * else. A model is a path, a model of vram serve, or a name in a local store
 * (Ollama, the Hugging Face cache, LM Studio); with none, every local model
 * is listed. Reads the models' own headers (never their weights), estimates
 * each precision, checks it against each GPU's free memory now (or --vram),
 * says what would make room, and with several models makes a plan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sys/stat.h>

#include "app/render_json.h"
#include "cli/cmd.h"
#include "cli/fithub.h"
#include "cli/fitmachine.h"
#include "cli/fitmodel.h"
#include "cli/fitview.h"
#include "core/err.h"
#include "core/units.h"
#include "model/localstore.h"
#include "model/modelfile.h"

enum { FA_AUTO, FA_ON, FA_OFF };

struct fit_opts {
    uint64_t ctx, batch, seq; /* 0: the estimate's defaults */
    const char *only;         /* --dtype or --quant */
    double kv_bits;
    int runtime, optim; /* -1: by the model's format; adamw */
    bool train, mixed, ckpt, json, online;
    unsigned lora_rank, gpus;
    int ngl; /* -1: all */
    int flash_attn;
    uint64_t vram; /* 0: the GPUs' free memory */
    const char *config;
    struct model_info shape; /* a model by its shape: layers, hidden, heads... */
};

static int cmd_fit(const void *opts, int argc, char **argv);

static int parse_precision(const char *arg, void *field, bool quant)
{
    struct estimate_precision p;
    if (estimate_precision(arg, &p) < 0 || (quant ? p.bits >= 16 : p.bits < 16))
        return -1;
    *(const char **)field = arg;
    return 0;
}

static int parse_dtype(const char *arg, void *field)
{
    return parse_precision(arg, field, false);
}

static int parse_quant(const char *arg, void *field)
{
    return parse_precision(arg, field, true);
}

static int parse_kv(const char *arg, void *field)
{
    struct estimate_precision p;
    if (estimate_precision(arg, &p) < 0)
        return -1;
    *(double *)field = p.bits;
    return 0;
}

/* "13B", "7.6b", "500M" parameters. */
static int parse_count(const char *arg, void *field)
{
    char *end;
    double v = strtod(arg, &end);
    double mult = !strcasecmp(end, "b") ? 1e9 : !strcasecmp(end, "m") ? 1e6 : *end ? 0 : 1;
    if (end == arg || v <= 0 || mult == 0 || v * mult > 1e14)
        return -1;
    *(uint64_t *)field = (uint64_t)(v * mult);
    return 0;
}

static const struct cmd_word runtimes[] = {
    {"torch", ESTIMATE_TORCH}, {"llamacpp", ESTIMATE_LLAMACPP},
    {"llama.cpp", ESTIMATE_LLAMACPP}, {"vllm", ESTIMATE_VLLM}, {NULL, 0},
};
static const struct cmd_word optims[] = {
    {"adamw", ESTIMATE_ADAMW}, {"adam", ESTIMATE_ADAMW}, {"adam8bit", ESTIMATE_ADAM8BIT},
    {"sgd", ESTIMATE_SGD},     {NULL, 0},
};
static const struct cmd_word on_off[] = {
    {"on", FA_ON}, {"off", FA_OFF}, {"auto", FA_AUTO}, {NULL, 0},
};

#define O struct fit_opts
#define SHAPE(NAME, F, HELP)                                                                      \
    {NAME, 0, CMD_NUMBER(O, shape.F, 1, 10000000), .arg = "N", .help = (HELP)}
static const struct cmd_opt fit_opts[] = {
    {"ctx", 'c', CMD_TOKENS(O, ctx, 1, 10000000), .arg = "N",
     .help = "prompt/context tokens (default 4096; 32k, 128k: k = 1024)"},
    {"batch", 'b', CMD_NUMBER(O, batch, 1, 100000), .arg = "N",
     .help = "sequences at once (default 1)"},
    {"dtype", 0, CMD_CUSTOM(O, only, parse_dtype), .arg = "D",
     .fix = "not one vram knows (see --help)", .help = "only this precision: fp32, fp16, bf16"},
    {"quant", 0, CMD_CUSTOM(O, only, parse_quant), .arg = "Q",
     .fix = "not one vram knows (see --help)",
     .help = "only this quantization: int8, fp8, q8_0, q6_k, q5_k, q4, q4_k_m, q3_k, q2_k"},
    {"kv-dtype", 0, CMD_CUSTOM(O, kv_bits, parse_kv), .arg = "D", .fix = "try bf16, fp8 or fp32",
     .help = "KV cache precision (default: the compute precision)"},
    {"runtime", 'r', CMD_CHOICE(O, runtime, runtimes), .arg = "R",
     .fix = "torch, llamacpp or vllm",
     .help = "torch, llamacpp (both measured), vllm (computed); default: llamacpp for GGUF "
             "files, torch for the others"},
    {"ngl", 0, CMD_NUMBER(O, ngl, 0, 100000), .arg = "N",
     .help = "llama.cpp: layers on the GPU, as its -ngl (default: all); vram fit says how many "
             "fit when all do not"},
    {"n-gpu-layers", 0, CMD_NUMBER(O, ngl, 0, 100000), .arg = "N"},
    {"flash-attn", 0, CMD_CHOICE(O, flash_attn, on_off), .arg = "F",
     .help = "llama.cpp: on (its default on NVIDIA GPUs) or off"},
    {"train", 0, CMD_FLAG(O, train), .help = "one training step instead of inference"},
    {"optim", 0, CMD_CHOICE(O, optim, optims), .arg = "O", .fix = "adamw, adam8bit or sgd",
     .help = "adamw (default), adam8bit, sgd"},
    {"seq", 0, CMD_TOKENS(O, seq, 1, 10000000), .arg = "N",
     .help = "training sequence length in tokens (default 1024)"},
    {"mixed", 0, CMD_FLAG(O, mixed), .help = "fp32 master weights, 16-bit compute"},
    {"ckpt", 0, CMD_FLAG(O, ckpt), .help = "gradient checkpointing"},
    {"lora-rank", 0, CMD_NUMBER(O, lora_rank, 1, 65536), .arg = "R",
     .help = "LoRA adapters of rank R, base frozen"},
    {"gpus", 0, CMD_NUMBER(O, gpus, 1, 64), .arg = "N",
     .help = "over N GPUs: what each holds, cut by tensor (vLLM's and SGLang's tensor parallel "
             "size) and by layer (llama.cpp's default split mode, a device_map), and whether N "
             "GPUs have room now"},
    {"vram", 'm', CMD_SIZE(O, vram, 1), .arg = "SIZE", .fix = "give a size such as 16G",
     .help = "check against SIZE instead of the GPUs' free memory"},
    {"online", 0, CMD_FLAG(O, online),
     .help = "a model not on this machine, by its Hugging Face name (ORG/REPO, ORG/REPO:QUANT): "
             "read its file list and headers from the hub (range requests, no download; "
             "HF_ENDPOINT, HF_TOKEN as huggingface_hub takes them), kept in "
             "~/.cache/vram/hub"},
    {"config", 0, CMD_STRING(O, config), .arg = "FILE",
     .help = "vram serve's configuration, for the footprints it measured (default "
             "/etc/vram/vram.conf when it is there)"},
    {"json", 'j', CMD_FLAG(O, json), .help = "JSON (sizes in bytes)"},
    {"params", 0, CMD_CUSTOM(O, shape.params, parse_count), .arg = "SIZE",
     .fix = "give a count such as 13B or 500M",
     .help = "a model by its shape, for what-ifs: its parameters (13B, 500M)"},
    SHAPE("layers", layers, "its layers"),
    SHAPE("hidden", hidden, "its hidden size"),
    SHAPE("heads", heads, "its attention heads"),
    SHAPE("kv-heads", kv_heads, "its KV heads (default: --heads)"),
    SHAPE("ff", ff, "its feed-forward size"),
    SHAPE("vocab", vocab, "its vocabulary"),
    SHAPE("head-dim", head_dim, "its head dimension (default: hidden / heads)"),
    SHAPE("experts", experts, "its experts (a mixture of experts)"),
    SHAPE("experts-used", experts_used, "the experts each token uses"),
    {NULL},
};
#undef SHAPE
#undef O

const struct cmd_entry cmd_fit_entry = {
    .name = "fit",
    .args = "[options] [MODEL...] | --params SIZE --layers N --hidden N --heads N [...]",
    .summary = "will a model fit, at what precision, next to what else",
    .intro = "MODEL is a .gguf file, a .safetensors file, a folder of shards (with\n"
             "model.safetensors.index.json), a config.json, a model of vram serve, or a\n"
             "name in a local store: llama3.1:8b (Ollama: $OLLAMA_MODELS, ~/.ollama/models,\n"
             "/usr/share/ollama/.ollama/models), Qwen/Qwen2.5-7B-Instruct (the Hugging Face\n"
             "cache: $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub), publisher/repo\n"
             "(LM Studio: ~/.lmstudio/models); with --online, ORG/REPO[:QUANT] of the Hugging\n"
             "Face hub before it is downloaded. Only headers are read. With no MODEL, every\n"
             "local model: its size on disk, what it needs at --ctx, and whether it fits now,\n"
             "after suspending or stopping what, or not at all.\n",
    .opts = fit_opts,
    .help = "A model by its shape, for what-ifs: --params 13B --layers 40 --hidden 5120\n"
            "--heads 40 [--kv-heads 8] [--ff 13824] [--vocab 32000] [--head-dim 128]\n"
            "[--experts 8 --experts-used 2]\n",
    .size = sizeof(struct fit_opts),
    .defaults = &(const struct fit_opts){.runtime = -1, .optim = -1, .ngl = -1},
    .max_operands = -1,
    .exec = cmd_fit,
};

/* A model of the hub, by its name, read from the headers fithub kept. */
static int load_hub(const char *arg, struct fit_model *fm, char *err, size_t errlen)
{
    struct fithub_model *h = malloc(sizeof *h);
    if (!h)
        return VRAM_EFAIL;
    int rc = fithub_fetch(arg, h, err, errlen);
    if (rc == VRAM_OK) {
        if (h->note[0])
            fprintf(stderr, "vram fit: %s: %s\n", h->name, h->note);
        rc = modelfile_load(h->dir, &fm->info, err, errlen);
        snprintf(fm->info.name, sizeof fm->info.name, "%s", h->name);
        fm->source = "the hub";
        fm->disk = h->bytes;
    }
    free(h);
    return rc;
}

/* A model by path, by vram serve's name, by a store's name, or (online)
 * by the hub's. */
static int load(const char *arg, bool online, struct fit_report *r, struct fit_model *fm,
                const struct fitmachine_serve *serve, char *err, size_t errlen)
{
    struct stat st;
    int rc;
    if (stat(arg, &st) == 0) {
        rc = modelfile_load(arg, &fm->info, err, errlen);
        fm->source = "file";
        fm->disk = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
        fitmachine_learned(serve, r, arg, NULL, fm);
        return rc;
    }
    const char *served = fitmachine_served_file(serve, arg);
    if (served) {
        rc = modelfile_load(served, &fm->info, err, errlen);
        fm->source = "vram serve";
        snprintf(fm->info.name, sizeof fm->info.name, "%s", arg);
        fitmachine_learned(serve, r, NULL, arg, fm);
        return rc;
    }
    struct modelref ref;
    rc = localstore_find(arg, &ref, err, errlen);
    if (rc == 1 && online && fithub_is_name(arg))
        return load_hub(arg, fm, err, errlen);
    if (rc == 1) {
        snprintf(err, errlen,
                 "%s: no such file or folder, no model of vram serve, and no model of that "
                 "name in %s%s",
                 arg, r->where,
                 fithub_is_name(arg) ? "; vram fit --online reads a model of the Hugging Face "
                                       "hub by that name before it is downloaded (its headers "
                                       "only)"
                                     : "");
        return VRAM_EINPUT;
    }
    if (rc != VRAM_OK)
        return rc;
    rc = localstore_load(&ref, &fm->info, err, errlen);
    fm->source = ref.store;
    fm->disk = ref.disk;
    char path[3 * MODELREF_PATH];
    localstore_path(&ref, path, sizeof path);
    fitmachine_learned(serve, r, path, NULL, fm);
    return rc;
}

/* The list: every model of every local store. */
struct listing {
    struct fit_report *r;
    const struct fitmachine_serve *serve;
    size_t cap;
};

static int listed(const struct modelref *ref, const char *why, void *arg)
{
    struct listing *l = arg;
    struct fit_report *r = l->r;
    if (r->nmodels == l->cap)
        return 1;
    struct fit_model *fm = &r->models[r->nmodels++];
    fm->source = ref->store;
    fm->disk = ref->disk;
    snprintf(fm->info.name, sizeof fm->info.name, "%s", ref->name);
    char err[512];
    if (why || localstore_load(ref, &fm->info, err, sizeof err) != VRAM_OK) {
        snprintf(fm->error, sizeof fm->error, "%s", why ? why : err);
        snprintf(fm->info.name, sizeof fm->info.name, "%s", ref->name);
        return 0;
    }
    fm->runtime = r->runtime_set ? r->opts.runtime
                  : fm->info.gguf ? ESTIMATE_LLAMACPP
                              : ESTIMATE_TORCH;
    char path[3 * MODELREF_PATH];
    localstore_path(ref, path, sizeof path);
    fitmachine_learned(l->serve, r, path, NULL, fm);
    return 0;
}

/* The estimate's settings: its defaults, then what the options said. */
static void fit_settings(const struct fit_opts *o, struct fit_report *r)
{
    estimate_defaults(&r->opts);
    struct estimate_opts *e = &r->opts;
    e->ctx = o->ctx ? o->ctx : e->ctx;
    e->batch = o->batch ? o->batch : e->batch;
    e->seq = o->seq ? o->seq : e->seq;
    e->kv_bits = o->kv_bits;
    if (o->runtime >= 0) {
        e->runtime = (enum estimate_runtime)o->runtime;
        r->runtime_set = true;
    }
    if (o->optim >= 0)
        e->optim = (enum estimate_optim)o->optim;
    e->train = o->train;
    e->mixed = o->mixed;
    e->checkpointing = o->ckpt;
    e->lora_rank = o->lora_rank;
    e->ngl = o->ngl;
    e->no_flash_attn = o->flash_attn == FA_OFF;
    r->split_gpus = o->gpus;
}

static bool by_shape(const struct fit_opts *o)
{
    const struct model_info *m = &o->shape;
    return m->params || m->layers || m->hidden || m->heads || m->kv_heads || m->ff || m->vocab ||
           m->head_dim || m->experts || m->experts_used;
}

/* The GPUs to fit on: one of --vram, or this machine's (or vram serve's). */
static void fit_machine(const struct fit_opts *o, struct fit_report *r,
                        const struct fitmachine_serve *serve)
{
    localstore_where(r->where, sizeof r->where);
    if (!o->vram) {
        fitmachine_gpus(r, serve);
        return;
    }
    r->ngpus = 1;
    r->gpus[0].index = 0;
    snprintf(r->gpus[0].name, sizeof r->gpus[0].name, "--vram");
    r->gpus[0].free = r->gpus[0].total = o->vram;
    r->have_gpus = true;
}

/* The models named (or, with none, every local one) into r->models. 0,
 * or the exit code with the error said. */
static int fit_models(struct fit_report *r, const struct fitmachine_serve *serve, bool online,
                      int argc, char **argv)
{
    if (r->listing) {
        struct listing l = {r, serve, 256};
        localstore_list(listed, &l);
        return 0;
    }
    for (int i = 0; i < argc; i++) {
        struct fit_model *fm = &r->models[r->nmodels];
        char err[1024];
        int rc = load(argv[i], online, r, fm, serve, err, sizeof err);
        if (rc < 0) {
            fprintf(stderr, "vram fit: %s\n", err);
            return err_exit_code(rc);
        }
        fm->runtime = r->runtime_set || r->opts.train ? r->opts.runtime
                      : fm->info.gguf                  ? ESTIMATE_LLAMACPP
                                                       : ESTIMATE_TORCH;
        r->nmodels++;
    }
    return 0;
}

/* The model --layers, --hidden, --heads... describe, as the last one. */
static void fit_shape(const struct fit_opts *o, struct fit_report *r)
{
    struct fit_model *fm = &r->models[r->nmodels++];
    struct model_info *m = &fm->info;
    *m = o->shape;
    snprintf(m->name, sizeof m->name, "custom");
    snprintf(m->arch, sizeof m->arch, "llama");
    snprintf(m->stored, sizeof m->stored, "bf16");
    m->stored_bits = 16;
    model_complete(m);
    if (!m->params)
        m->params = model_count_params(m, &m->params_active);
    if (!m->params_active)
        m->params_active = m->params;
    fm->source = "shape";
    fm->runtime = r->opts.runtime;
}

/* Each model's answer, and with several the plan that places them. */
static void fit_answer(struct fit_report *r, const char *only)
{
    uint64_t need[FITPLAN_MAX], room[FITPLAN_MAX];
    for (size_t i = 0; i < r->nmodels; i++) {
        struct fit_model *fm = &r->models[i];
        if (fm->error[0])
            continue;
        fitmodel_answer(r, fm, only);
        if (i < FITPLAN_MAX)
            need[i] = fm->best >= 0 ? fm->est[fm->best].total : UINT64_MAX;
    }
    for (size_t g = 0; g < r->ngpus; g++)
        room[g] = r->gpus[g].free;
    if (!r->listing)
        fitplan_make(need, r->nmodels, room, r->ngpus, &r->plan);
}

/* The answer printed; 0: every model named fits now (whole, or llama.cpp
 * with -ngl N), 1: one does not (the answer says what would make room). */
static int fit_say(const struct fit_report *r, bool json)
{
    if (json) {
        json_t *doc = fitview_json(r);
        json_dumpf(doc, stdout, JSON_INDENT(2) | RENDER_JSON_REALS);
        fputc('\n', stdout);
        json_decref(doc);
    } else {
        fitview_text(stdout, r);
    }
    for (size_t i = 0; !r->listing && i < r->nmodels; i++)
        if (r->models[i].verdict == FIT_AFTER_ROOM || r->models[i].verdict == FIT_NOWHERE)
            return 1;
    return 0;
}

static int cmd_fit(const void *opts, int argc, char **argv)
{
    const struct fit_opts *o = opts;
    bool shape = by_shape(o);
    if ((size_t)argc + shape > FITPLAN_MAX)
        return cmd_bad_usage(&cmd_fit_entry, "at most %d models at once", FITPLAN_MAX);
    if (shape && (!o->shape.layers || !o->shape.hidden || !o->shape.heads))
        return cmd_bad_usage(&cmd_fit_entry,
                             "a model by its shape needs --layers, --hidden and --heads "
                             "(and --params, or --ff and --vocab to count them)");
    struct fit_report *r = calloc(1, sizeof *r);
    if (!r)
        return 1;
    fit_settings(o, r);
    char err[1024];
    struct fitmachine_serve serve;
    if (fitmachine_serve_open(&serve, o->config, err, sizeof err) != VRAM_OK) {
        fprintf(stderr, "vram fit: %s\n", err);
        free(r);
        return 2;
    }
    fit_machine(o, r, &serve);
    r->listing = argc == 0 && !shape;
    r->models = calloc(r->listing ? 256 : (size_t)argc + shape, sizeof *r->models);
    int rc = r->models ? fit_models(r, &serve, o->online, argc, argv) : 1;
    fitmachine_serve_close(&serve);
    if (rc == 0) {
        if (shape)
            fit_shape(o, r);
        fit_answer(r, o->only);
        rc = fit_say(r, o->json);
    }
    free(r->models);
    free(r);
    return rc;
}
