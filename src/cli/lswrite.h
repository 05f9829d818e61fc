/* lswrite: a llama-swap configuration (cli/lsconf.h) written as the
 * vram.conf that serves the same models under the same names: each model
 * a [model ID] with its command, aliases, ttl as keep_alive (its meaning
 * kept: llama-swap's 0 is never, vram's forever), cmdStop as stop,
 * useModelName as upstream_name, checkEndpoint as health, env, groups and
 * hooks as their nearest settings. What has no equivalent is said twice:
 * as a comment where it would be, and on the notes stream. Whatever it
 * writes, `vram serve --check` reads (or it writes the model as comments,
 * saying why). */
#ifndef VRAM_CLI_LSWRITE_H
#define VRAM_CLI_LSWRITE_H

#include <stdio.h>

#include "cli/lsconf.h"

struct lswrite_opts {
    const char *source; /* the file read, for the header and the notes */
    const char *listen; /* the proxy's HOST:PORT (llama-swap's --listen is a flag) */
    const char *vram;   /* the size of a model whose command names no model file */
};

/* The configuration to out, the notes to notes (NULL: none); the number of
 * models written, 0 when none could be. */
size_t lswrite(const struct lsconf *c, const struct lswrite_opts *o, FILE *out, FILE *notes);

#endif
