/* fitview: `vram fit`'s answers as a table for people and JSON for scripts. */
#ifndef VRAM_CLI_FITVIEW_H
#define VRAM_CLI_FITVIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "core/estimate.h"
#include "core/fitplan.h"
#include "core/model.h"

#define FIT_MAX_PREC 8

struct fit_gpu {
    unsigned index;
    char name[96];
    uint64_t free;
};

struct fit_model {
    struct model_info info;
    struct estimate_result est[FIT_MAX_PREC];
    int nest;
    int best; /* the highest precision that fits somewhere, -1 if none */
};

struct fit_report {
    struct estimate_opts opts;
    struct fit_model *models;
    size_t nmodels;
    struct fit_gpu gpus[FITPLAN_MAX];
    size_t ngpus;
    bool have_gpus; /* false: no driver and no --vram */
    struct fitplan plan;
};

void fitview_text(FILE *out, const struct fit_report *r);
json_t *fitview_json(const struct fit_report *r);

#endif
