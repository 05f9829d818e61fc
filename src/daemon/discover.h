/* discover: the GGUF models already on disk served with no configuration
 * (discover = in [serve]): each model of the stores named (Ollama's, the
 * Hugging Face cache, LM Studio's, llama.cpp's) becomes a model of the
 * daemon under the name its store gives it, run by llama.cpp's server.
 * Its size, context (-c) and layers on the GPU (-ngl) come from `vram
 * fit`'s llama.cpp estimate (core/llamacpp.c): the size when the scheduler
 * places it, the rest when it starts, for the room it was given; what it
 * really took is learned per context, as other footprints are. */
#ifndef VRAM_DAEMON_DISCOVER_H
#define VRAM_DAEMON_DISCOVER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/config.h"

struct daemon;

#define DISCOVER_CTX 8192 /* the context when neither discover_ctx nor a request says */

/* What one discovered model was last started with. */
struct discover_run {
    unsigned ctx;      /* -c */
    int ngl;           /* -ngl; the model's layers + 1 is all of them */
    unsigned layers;   /* all of them, as -ngl counts */
    uint64_t estimate; /* vram fit's figure for that */
};

struct discover {
    struct discover_run run[CONFIG_MAX_MODELS];
};

/* What model m holds on a GPU before it has run at this context: the
 * measured figure for its context when there is one, else vram fit's
 * estimate with every layer on the GPU, at most what the largest GPU holds
 * for models (a larger model takes a GPU and runs some layers on the CPU). */
uint64_t discover_need(struct daemon *d, const struct config_model *m);

/* Model i's command for this start: llama-server with -m file (the path
 * daemon/modelfd.c made for its open file), its context and -ngl, chosen
 * for the room the scheduler gave it on its GPU next to what is resident
 * there; recorded in d->disc. */
void discover_command(struct daemon *d, unsigned i, const char *file, char *out, size_t len);

/* The name its measured footprint is kept under: a discovered model's
 * depends on its context ("NAME ctx=8192"); the others', their name. */
void discover_footprint_name(const struct daemon *d, unsigned i, char *out, size_t len);

/* A request for discovered model i asks for ctx tokens (Ollama's
 * options.num_ctx, or X-Vram-Num-Ctx): from now on it runs with that
 * context; a process running with another is stopped (once idle when it
 * is answering), and starts again with it on demand. */
void discover_want_ctx(struct daemon *d, unsigned i, uint64_t ctx);

/* The context a request for model i asks for, from its JSON body (may be
 * NULL) or its X-Vram-Num-Ctx header (may be NULL), to discover_want_ctx:
 * NULL, or what is wrong with the header (400). */
const char *discover_ask(struct daemon *d, unsigned i, const json_t *body, const char *header);

#endif
