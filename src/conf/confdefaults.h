/* confdefaults: what the models of vram.conf get when they say nothing,
 * from [serve] and from Ollama's environment variables: keep_alive as vram
 * and Ollama write it, max_loaded, and OLLAMA_KEEP_ALIVE,
 * OLLAMA_MAX_LOADED_MODELS and OLLAMA_MAX_QUEUE where [serve] is silent. */
#ifndef VRAM_DAEMON_CONFDEFAULTS_H
#define VRAM_DAEMON_CONFDEFAULTS_H

#include <stdbool.h>
#include <stddef.h>

#include "conf/config.h"

/* A keep-alive: a duration (5m, 1h30m, 0) or seconds; forever, or
 * negative (-1, -1m, as Ollama takes it): for good, *out = -1. */
bool confdefaults_keep(const char *v, double *out);

/* max_loaded: "6" (in all), "2 per gpu" (on each GPU), or both ("6, 2 per
 * gpu"); 0 is no limit. The other stays 0 when one alone is given. */
bool confdefaults_max_loaded(const char *v, unsigned *all, unsigned *gpu);

/* Ollama's variables into c where [serve] said nothing of them (*_set),
 * naming those used in c->from_env: 0, or -1 with err for a value that is
 * none (the variable named, and the setting that overrides it). */
int confdefaults_env(struct config *c, bool keep_set, bool loaded_set, bool queue_set, char *err,
                     size_t len);

#endif
