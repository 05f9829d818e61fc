/* fitmodel: one model's answers for vram fit: its estimates at each
 * precision, the best that fits now, what would make room when none does,
 * how many layers llama.cpp can put on the GPU and up to which context, and
 * which --gpu-memory-utilization vLLM can be given. */
#ifndef VRAM_CLI_FITMODEL_H
#define VRAM_CLI_FITMODEL_H

#include "cli/fitview.h"

/* fm->info, runtime and learned filled; only: one precision, or NULL. */
void fitmodel_answer(const struct fit_report *r, struct fit_model *fm, const char *only);

#endif
