/* cmd_fit: `vram fit`, will this model fit, at what precision, next to what
 * else. A model is a path, a model of vram serve, or a name in a local store
 * (Ollama, the Hugging Face cache, LM Studio); with none, every local model
 * is listed. Reads the models' own headers (never their weights), estimates
 * each precision, checks it against each GPU's free memory now (or --vram),
 * says what would make room, and with several models makes a plan. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sys/stat.h>

#include "app/render_json.h"
#include "cli/cmd.h"
#include "cli/fitmachine.h"
#include "cli/fitmodel.h"
#include "cli/fitview.h"
#include "core/err.h"
#include "core/units.h"
#include "model/localstore.h"
#include "model/modelfile.h"

static int cmd_fit(int argc, char **argv);

const struct cmd_entry cmd_fit_entry = {
    .name = "fit",
    .args = "[options] [MODEL...] | --params SIZE --layers N --hidden N --heads N [...]",
    .summary = "will a model fit, at what precision, next to what else",
    .help = "MODEL is a .gguf file, a .safetensors file, a folder of shards (with\n"
            "model.safetensors.index.json), a config.json, a model of vram serve, or a\n"
            "name in a local store: llama3.1:8b (Ollama: $OLLAMA_MODELS, ~/.ollama/models,\n"
            "/usr/share/ollama/.ollama/models), Qwen/Qwen2.5-7B-Instruct (the Hugging Face\n"
            "cache: $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub), publisher/repo\n"
            "(LM Studio: ~/.lmstudio/models). Only headers are read. With no MODEL, every\n"
            "local model: its size on disk, what it needs at --ctx, and whether it fits now,\n"
            "after suspending or stopping what, or not at all.\n"
            "\n"
            "  -c, --ctx N            prompt/context tokens (default 4096; 32k, 128k: k = 1024)\n"
            "  -b, --batch N          sequences at once (default 1)\n"
            "      --dtype D          only this precision: fp32, fp16, bf16\n"
            "      --quant Q          only this quantization: int8, fp8, q8_0, q6_k, q5_k, q4,\n"
            "                         q4_k_m, q3_k, q2_k\n"
            "      --kv-dtype D       KV cache precision (default: the compute precision)\n"
            "  -r, --runtime R        torch, llamacpp (both measured), vllm (computed); default:\n"
            "                         llamacpp for GGUF files, torch for the others\n"
            "      --ngl N            llama.cpp: layers on the GPU, as its -ngl (default: all);\n"
            "                         vram fit says how many fit when all do not\n"
            "      --flash-attn F     llama.cpp: on (its default on NVIDIA GPUs) or off\n"
            "      --train            one training step instead of inference\n"
            "      --optim O          adamw (default), adam8bit, sgd\n"
            "      --seq N            training sequence length in tokens (default 1024)\n"
            "      --mixed            fp32 master weights, 16-bit compute\n"
            "      --ckpt             gradient checkpointing\n"
            "      --lora-rank R      LoRA adapters of rank R, base frozen\n"
            "      --gpus N           over N GPUs: what each holds, cut by tensor (vLLM's and\n"
            "                         SGLang's tensor parallel size) and by layer (llama.cpp's\n"
            "                         default split mode, a device_map), and whether N GPUs\n"
            "                         have room now\n"
            "  -m, --vram SIZE        check against SIZE instead of the GPUs' free memory\n"
            "      --config FILE      vram serve's configuration, for the footprints it measured\n"
            "                         (default /etc/vram/vram.conf when it is there)\n"
            "  -j, --json             JSON (sizes in bytes)\n"
            "\n"
            "A model by its shape, for what-ifs: --params 13B --layers 40 --hidden 5120\n"
            "--heads 40 [--kv-heads 8] [--ff 13824] [--vocab 32000] [--head-dim 128]\n"
            "[--experts 8 --experts-used 2]\n",
    .exec = cmd_fit,
};

enum {
    O_DTYPE = 256,
    O_QUANT,
    O_KV,
    O_TRAIN,
    O_OPTIM,
    O_SEQ,
    O_MIXED,
    O_CKPT,
    O_LORA,
    O_PARAMS,
    O_LAYERS,
    O_HIDDEN,
    O_HEADS,
    O_KVH,
    O_FF,
    O_VOCAB,
    O_HD,
    O_EXPERTS,
    O_EUSED,
    O_NGL,
    O_FA,
    O_CONFIG,
    O_GPUS,
};

static int number(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s == '-' || end == s || *end || v < lo || v > hi)
        return cmd_bad_usage(&cmd_fit_entry, "%s '%s': give a whole number from %llu to %llu", opt,
                             s, (unsigned long long)lo, (unsigned long long)hi);
    *out = v;
    return 0;
}

/* A count of tokens: 8192, 32k, 128k (128 x 1024), 1M. */
static int tokens(const char *opt, const char *s, uint64_t *out)
{
    if (units_parse_tokens(s, out) < 0 || *out < 1 || *out > 10000000)
        return cmd_bad_usage(&cmd_fit_entry,
                             "%s '%s': a count of tokens from 1 to 10000000, like 8192 or 128k "
                             "(k = 1024)",
                             opt, s);
    return 0;
}

/* "13B", "7.6b", "500M" parameters. */
static int count(const char *s, uint64_t *out)
{
    char *end;
    double v = strtod(s, &end);
    double mult = !strcasecmp(end, "b") ? 1e9 : !strcasecmp(end, "m") ? 1e6 : *end ? 0 : 1;
    if (end == s || v <= 0 || mult == 0 || v * mult > 1e14)
        return cmd_bad_usage(&cmd_fit_entry, "--params '%s': give a count such as 13B or 500M", s);
    *out = (uint64_t)(v * mult);
    return 0;
}

/* A model by path, by vram serve's name, or by a store's name. */
static int load(const char *arg, struct fit_report *r, struct fit_model *fm,
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
    if (rc == 1) {
        snprintf(err, errlen,
                 "%s: no such file or folder, no model of vram serve, and no model of that "
                 "name in %s",
                 arg, r->where);
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

static bool is_gguf(const struct model_info *m)
{
    return m->embed_bytes || m->output_bytes;
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
                  : ref->gguf ? ESTIMATE_LLAMACPP
                              : ESTIMATE_TORCH;
    char path[3 * MODELREF_PATH];
    localstore_path(ref, path, sizeof path);
    fitmachine_learned(l->serve, r, path, NULL, fm);
    return 0;
}

static int cmd_fit(int argc, char **argv)
{
    static const struct option opts[] = {
        {"ctx", required_argument, NULL, 'c'},
        {"batch", required_argument, NULL, 'b'},
        {"dtype", required_argument, NULL, O_DTYPE},
        {"quant", required_argument, NULL, O_QUANT},
        {"kv-dtype", required_argument, NULL, O_KV},
        {"runtime", required_argument, NULL, 'r'},
        {"train", no_argument, NULL, O_TRAIN},
        {"optim", required_argument, NULL, O_OPTIM},
        {"seq", required_argument, NULL, O_SEQ},
        {"mixed", no_argument, NULL, O_MIXED},
        {"ckpt", no_argument, NULL, O_CKPT},
        {"lora-rank", required_argument, NULL, O_LORA},
        {"vram", required_argument, NULL, 'm'},
        {"json", no_argument, NULL, 'j'},
        {"params", required_argument, NULL, O_PARAMS},
        {"layers", required_argument, NULL, O_LAYERS},
        {"hidden", required_argument, NULL, O_HIDDEN},
        {"heads", required_argument, NULL, O_HEADS},
        {"kv-heads", required_argument, NULL, O_KVH},
        {"ff", required_argument, NULL, O_FF},
        {"vocab", required_argument, NULL, O_VOCAB},
        {"head-dim", required_argument, NULL, O_HD},
        {"experts", required_argument, NULL, O_EXPERTS},
        {"experts-used", required_argument, NULL, O_EUSED},
        {"ngl", required_argument, NULL, O_NGL},
        {"n-gpu-layers", required_argument, NULL, O_NGL},
        {"flash-attn", required_argument, NULL, O_FA},
        {"config", required_argument, NULL, O_CONFIG},
        {"gpus", required_argument, NULL, O_GPUS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct fit_report r;
    memset(&r, 0, sizeof r);
    estimate_defaults(&r.opts);
    struct model_info shape;
    memset(&shape, 0, sizeof shape);
    const char *only = NULL;
    uint64_t vram = 0, v = 0;
    bool json = false, by_shape = false;
    const char *config = NULL;
    struct estimate_precision tmp;
    int c, rc = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "c:b:r:m:jh", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            rc = tokens("--ctx", optarg, &r.opts.ctx);
            break;
        case 'b':
            rc = number("--batch", optarg, 1, 100000, &r.opts.batch);
            break;
        case O_DTYPE:
        case O_QUANT:
            if (estimate_precision(optarg, &tmp) < 0 || (c == O_DTYPE && tmp.bits < 16) ||
                (c == O_QUANT && tmp.bits >= 16))
                return cmd_bad_usage(&cmd_fit_entry, "%s '%s': not one vram knows (see --help)",
                                     c == O_DTYPE ? "--dtype" : "--quant", optarg);
            only = optarg;
            break;
        case O_KV:
            if (estimate_precision(optarg, &tmp) < 0)
                return cmd_bad_usage(&cmd_fit_entry, "--kv-dtype '%s': try bf16, fp8 or fp32",
                                     optarg);
            r.opts.kv_bits = tmp.bits;
            break;
        case 'r':
            if (!strcmp(optarg, "torch"))
                r.opts.runtime = ESTIMATE_TORCH;
            else if (!strcmp(optarg, "llamacpp") || !strcmp(optarg, "llama.cpp"))
                r.opts.runtime = ESTIMATE_LLAMACPP;
            else if (!strcmp(optarg, "vllm"))
                r.opts.runtime = ESTIMATE_VLLM;
            else
                return cmd_bad_usage(&cmd_fit_entry, "--runtime '%s': torch, llamacpp or vllm",
                                     optarg);
            r.runtime_set = true;
            break;
        case O_CONFIG:
            config = optarg;
            break;
        case O_TRAIN:
            r.opts.train = true;
            break;
        case O_OPTIM:
            if (!strcmp(optarg, "adamw") || !strcmp(optarg, "adam"))
                r.opts.optim = ESTIMATE_ADAMW;
            else if (!strcmp(optarg, "adam8bit"))
                r.opts.optim = ESTIMATE_ADAM8BIT;
            else if (!strcmp(optarg, "sgd"))
                r.opts.optim = ESTIMATE_SGD;
            else
                return cmd_bad_usage(&cmd_fit_entry, "--optim '%s': adamw, adam8bit or sgd",
                                     optarg);
            break;
        case O_SEQ:
            rc = tokens("--seq", optarg, &r.opts.seq);
            break;
        case O_MIXED:
            r.opts.mixed = true;
            break;
        case O_CKPT:
            r.opts.checkpointing = true;
            break;
        case O_LORA:
            rc = number("--lora-rank", optarg, 1, 65536, &v);
            r.opts.lora_rank = (unsigned)v;
            break;
        case 'm':
            if (units_parse_size(optarg, &vram) < 0 || vram == 0)
                return cmd_bad_usage(&cmd_fit_entry, "--vram '%s': give a size such as 16G",
                                     optarg);
            break;
        case 'j':
            json = true;
            break;
        case O_PARAMS:
            rc = count(optarg, &shape.params), by_shape = true;
            break;
        case O_LAYERS:
        case O_HIDDEN:
        case O_HEADS:
        case O_KVH:
        case O_FF:
        case O_VOCAB:
        case O_HD:
        case O_EXPERTS:
        case O_EUSED: {
            static const char *const names[] = {"--layers",   "--hidden",  "--heads",
                                                "--kv-heads", "--ff",      "--vocab",
                                                "--head-dim", "--experts", "--experts-used"};
            unsigned *fields[] = {&shape.layers,   &shape.hidden,  &shape.heads,
                                  &shape.kv_heads, &shape.ff,      &shape.vocab,
                                  &shape.head_dim, &shape.experts, &shape.experts_used};
            rc = number(names[c - O_LAYERS], optarg, 1, 10000000, &v);
            *fields[c - O_LAYERS] = (unsigned)v;
            by_shape = true;
            break;
        }
        case O_GPUS:
            rc = number("--gpus", optarg, 1, 64, &v);
            r.split_gpus = (unsigned)v;
            break;
        case O_NGL:
            rc = number("--ngl", optarg, 0, 100000, &v);
            r.opts.ngl = (int)v;
            break;
        case O_FA:
            if (strcmp(optarg, "on") && strcmp(optarg, "off") && strcmp(optarg, "auto"))
                return cmd_bad_usage(&cmd_fit_entry, "--flash-attn '%s': on, off or auto", optarg);
            r.opts.no_flash_attn = !strcmp(optarg, "off");
            break;
        case 'h':
            cmd_usage(&cmd_fit_entry, 0);
            return 0;
        default:
            return cmd_bad_usage(&cmd_fit_entry, NULL);
        }
        if (rc)
            return rc;
    }
    size_t nfiles = (size_t)(argc - optind);
    if (nfiles + by_shape > FITPLAN_MAX)
        return cmd_bad_usage(&cmd_fit_entry, "at most %d models at once", FITPLAN_MAX);
    if (by_shape && (!shape.layers || !shape.hidden || !shape.heads))
        return cmd_bad_usage(&cmd_fit_entry,
                             "a model by its shape needs --layers, --hidden and --heads "
                             "(and --params, or --ff and --vocab to count them)");
    char err[1024];
    struct fitmachine_serve serve;
    if (fitmachine_serve_open(&serve, config, err, sizeof err) != VRAM_OK) {
        fprintf(stderr, "vram fit: %s\n", err);
        return 2;
    }
    localstore_where(r.where, sizeof r.where);
    if (vram) {
        r.ngpus = 1;
        r.gpus[0].index = 0;
        snprintf(r.gpus[0].name, sizeof r.gpus[0].name, "--vram");
        r.gpus[0].free = r.gpus[0].total = vram;
        r.have_gpus = true;
    } else {
        fitmachine_gpus(&r, &serve);
    }
    r.listing = nfiles == 0 && !by_shape;
    size_t cap = r.listing ? 256 : nfiles + by_shape;
    r.models = calloc(cap, sizeof *r.models);
    if (!r.models) {
        fitmachine_serve_close(&serve);
        return 1;
    }
    if (r.listing) {
        struct listing l = {&r, &serve, cap};
        localstore_list(listed, &l);
    }
    for (size_t i = 0; i < nfiles; i++) {
        struct fit_model *fm = &r.models[r.nmodels];
        rc = load(argv[optind + (int)i], &r, fm, &serve, err, sizeof err);
        if (rc < 0) {
            fprintf(stderr, "vram fit: %s\n", err);
            free(r.models);
            fitmachine_serve_close(&serve);
            return err_exit_code(rc);
        }
        fm->runtime = r.runtime_set || r.opts.train ? r.opts.runtime
                      : is_gguf(&fm->info)           ? ESTIMATE_LLAMACPP
                                                     : ESTIMATE_TORCH;
        r.nmodels++;
    }
    fitmachine_serve_close(&serve);
    if (by_shape) {
        struct fit_model *fm = &r.models[r.nmodels++];
        struct model_info *m = &fm->info;
        *m = shape;
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
        fm->runtime = r.opts.runtime;
    }
    uint64_t need[FITPLAN_MAX], room[FITPLAN_MAX];
    for (size_t i = 0; i < r.nmodels; i++) {
        struct fit_model *fm = &r.models[i];
        if (fm->error[0])
            continue;
        fitmodel_answer(&r, fm, only);
        if (i < FITPLAN_MAX)
            need[i] = fm->best >= 0 ? fm->est[fm->best].total : UINT64_MAX;
    }
    for (size_t g = 0; g < r.ngpus; g++)
        room[g] = r.gpus[g].free;
    if (!r.listing)
        fitplan_make(need, r.nmodels, room, r.ngpus, &r.plan);
    if (json) {
        json_t *doc = fitview_json(&r);
        json_dumpf(doc, stdout, JSON_INDENT(2) | RENDER_JSON_REALS);
        fputc('\n', stdout);
        json_decref(doc);
    } else {
        fitview_text(stdout, &r);
    }
    /* 0: every model named fits now (whole, or llama.cpp with -ngl N);
     * 1: one does not (the answer says what would make room) */
    int code = 0;
    for (size_t i = 0; !r.listing && i < r.nmodels; i++)
        if (r.models[i].verdict == FIT_AFTER_ROOM || r.models[i].verdict == FIT_NOWHERE)
            code = 1;
    free(r.models);
    return code;
}
