/* precheck: what each model's command needs of this host before it runs,
 * looked at before any model runs, so that a configuration whose models
 * can only fail says so at once (vram serve --check fails on it, vram
 * serve warns) rather than with a 502 at the first request: its program
 * (found as its shell will find it: a path, else on the PATH it will
 * have, its env = PATH when it sets one), the model file it names (file =,
 * and the -m/--model of a command that runs no container), and for a
 * docker command, docker's daemon (DOCKER_HOST, else its socket). What
 * only the shell knows (a $VARIABLE, a builtin, a pipeline) is not
 * guessed at. */
#ifndef VRAM_DAEMON_PRECHECK_H
#define VRAM_DAEMON_PRECHECK_H

#include <stddef.h>

#include "conf/config.h"

/* The problems of c's models, one line each ("FILE: [model NAME] the
 * thing: why: the fix"), into out (cut at len): how many. */
size_t precheck_models(const struct config *c, char *out, size_t len);

#endif
