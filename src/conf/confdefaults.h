/* confdefaults: the values of [serve] that are the models' defaults, as
 * vram and Ollama write them: keep_alive (a duration, forever, or
 * negative as Ollama takes it) and max_loaded (config.c reads Ollama's
 * OLLAMA_* variables where [serve] is silent, with these). */
#ifndef VRAM_DAEMON_CONFDEFAULTS_H
#define VRAM_DAEMON_CONFDEFAULTS_H

#include <stdbool.h>
#include <stddef.h>

/* A keep-alive: a duration (5m, 1h30m, 0) or seconds; forever, or
 * negative (-1, -1m, as Ollama takes it): for good, *out = -1. */
bool confdefaults_keep(const char *v, double *out);

/* max_loaded: "6" (in all), "2 per gpu" (on each GPU), or both ("6, 2 per
 * gpu"); 0 is no limit. The other stays 0 when one alone is given. */
bool confdefaults_max_loaded(const char *v, unsigned *all, unsigned *gpu);

#endif
