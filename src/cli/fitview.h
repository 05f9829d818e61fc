/* fitview: `vram fit`'s answers as a table for people and JSON for scripts:
 * one model or several (with a plan), or every local model (the list). */
#ifndef VRAM_CLI_FITVIEW_H
#define VRAM_CLI_FITVIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "core/estimate.h"
#include "core/fitplan.h"
#include "core/model.h"
#include "core/modelname.h"
#include "core/split.h"

#define FIT_MAX_PREC    8
#define FIT_MAX_HOLDERS 32

/* What holds memory on a GPU now: a process, or a model of vram serve
 * (which can be suspended to host RAM rather than stopped). */
struct fit_holder {
    uint32_t pid;
    char name[MODELNAME_MAX]; /* the process's name, or vram serve's name for the model */
    uint64_t bytes;
    bool served;
};

struct fit_gpu {
    unsigned index;
    char name[96];
    uint64_t free, total;
    struct fit_holder holders[FIT_MAX_HOLDERS];
    size_t nholders;
};

/* The answer for one model, said once: the text, the JSON and the exit
 * code (0 for FIT_NOW and FIT_PARTIAL) follow it. */
enum fit_verdict {
    FIT_UNKNOWN,    /* no GPU to check against, or not read */
    FIT_NOW,        /* whole, on some GPU now */
    FIT_PARTIAL,    /* llama.cpp: some layers (-ngl N, N >= 1) on a GPU now, the rest on the CPU */
    FIT_AFTER_ROOM, /* not now; after suspending or stopping what room_* names */
    FIT_NOWHERE,
};

struct fit_model {
    struct model_info info;
    enum estimate_runtime runtime;
    const char *source; /* "file", "ollama", "huggingface", "lmstudio", "vram serve", "shape" */
    uint64_t disk;      /* bytes on disk; 0: not known */
    struct estimate_result est[FIT_MAX_PREC];
    int nest;
    int best; /* the highest precision that fits somewhere (a quantized file's own
                 when it fits), -1 if none */
    int better; /* a higher precision that fits too but is another download, -1: none */
    /* what vram serve measured for this model on each GPU's kind; 0: none */
    uint64_t learned[FITPLAN_MAX];
    char learned_as[MODELNAME_MAX];
    /* when nothing fits now: the GPU where freeing the fewest holders
     * makes room (-1: none would), and which */
    int room_gpu, room_count;
    bool room_free[FIT_MAX_HOLDERS];
    /* llama.cpp: on the GPU with the most room, the most layers (-ngl) at
     * the asked context, and the longest context with every layer */
    int ngl_gpu, ngl_fit;
    uint64_t ctx_fit;
    struct estimate_result ngl_est;
    /* vLLM: per GPU the most --gpu-memory-utilization it can take beside
     * what runs and the KV tokens that leaves; the least the context needs */
    double util_max[FITPLAN_MAX], util_need;
    uint64_t kv_tokens[FITPLAN_MAX];
    /* --gpus N: the first estimate spread over N GPUs each way, and how
     * many of this machine's GPUs have room for a share now */
    struct estimate_result split[2];
    unsigned split_room[2];
    char error[512]; /* the list: why it could not be read */
    enum fit_verdict verdict;
};

struct fit_report {
    struct estimate_opts opts;
    bool runtime_set; /* --runtime given; else by format (GGUF: llamacpp) */
    struct fit_model *models;
    size_t nmodels;
    struct fit_gpu gpus[FITPLAN_MAX];
    size_t ngpus;
    bool have_gpus; /* false: no driver and no --vram */
    struct fitplan plan;
    bool listing; /* vram fit with no model: every local model */
    unsigned split_gpus; /* --gpus N: over N GPUs; 0 or 1: one */
    char where[2048]; /* the stores looked in */
};

/* What model k's estimate needs on GPU g: vram serve's measured figure for
 * the first (as stored) estimate when there is one, else the estimate. */
uint64_t fitview_need(const struct fit_model *fm, int k, size_t g);

void fitview_text(FILE *out, const struct fit_report *r);
json_t *fitview_json(const struct fit_report *r);

#endif
