/* target: what vram suspend, resume, load and unload act on: a process by
 * its id, or a model of vram serve by its name, asked of the daemon. The
 * one place that tells the two apart and that carries a model's verb to
 * the daemon. */
#ifndef VRAM_CLI_TARGET_H
#define VRAM_CLI_TARGET_H

#include <jansson.h>

#include "cli/cmd.h"

/* arg is a process id (digits only: 1) or a model's name (0: a name may
 * begin with digits, "01-ai/Yi-6B"); a number that is no pid is refused
 * as e's bad usage (minus its exit code). */
int target_parse(const struct cmd_entry *e, const char *arg, int *pid);

/* POST /v1/models/NAME/VERB (verb: e's name) to the daemon at sock (NULL:
 * the default) with body (may be NULL; still the caller's), a progress line saying doing
 * ("suspending qwen") meanwhile; prints the daemon's answer. Returns the
 * exit code: 0, 1, or 2 for a bad name. */
int target_model(const struct cmd_entry *e, const char *sock, const char *name, json_t *body,
                 const char *doing);

#endif
