/* names: the model a client means by the name it sends: a model's own
 * name, one of its aliases (aliases = a, b), either with Ollama's default
 * tag (NAME:latest is NAME, and NAME is NAME:latest). The control API's
 * and the proxy's (proxyops.find). */
#ifndef VRAM_DAEMON_NAMES_H
#define VRAM_DAEMON_NAMES_H

#include "daemon/daemon.h"

/* The model name leads to (not removed by a reload), or -1. */
int names_find(const struct daemon *d, const char *name);

#endif
