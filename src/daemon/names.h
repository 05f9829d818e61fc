/* names: the model a client means by the name it sends: a model's own
 * name, one of its aliases (aliases = a, b), either with Ollama's default
 * tag (NAME:latest is NAME, and NAME is NAME:latest). */
#ifndef VRAM_DAEMON_NAMES_H
#define VRAM_DAEMON_NAMES_H

#include "daemon/daemon.h"

/* The model name leads to (not removed by a reload), or -1. */
int names_find(const struct daemon *d, const char *name);

/* The model's name at the start of a path (at: past "/m/"), into name:
 * one segment percent-decoded ("Qwen%2FQwen2.5-7B"), or the longest run of
 * segments that names a model ("Qwen/Qwen2.5-7B/v1/..."), else the first
 * segment. Where the rest of the path begins, NULL at its end. */
const char *names_in_path(const struct daemon *d, const char *at, char *name, size_t len);

#endif
