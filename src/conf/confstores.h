/* confstores: the GGUF models already on disk, served with no
 * configuration (discover = in [serve]): each model of the stores named
 * (Ollama's, the Hugging Face cache, LM Studio's, llama.cpp's) becomes a
 * model of the configuration under the name its store gives it, run by
 * llama.cpp's server. */
#ifndef VRAM_CONF_CONFSTORES_H
#define VRAM_CONF_CONFSTORES_H

#include <stdbool.h>
#include <stddef.h>

#include "conf/config.h"

/* Adds to c a model for every GGUF model of the stores c->discover names
 * whose name no [model] section or alias has and no pattern of
 * discover_exclude matches (at most CONFIG_MAX_MODELS in all; the rest
 * are said in the log), and finds llama.cpp's server (llama_server =, else
 * llama-server on PATH) into c->llama_server. 0, or -1 with err when
 * there is no server to run them. Nothing when c->discover is "". */
int confstores_add(struct config *c, char *err, size_t len);

/* s in single quotes for /bin/sh, its own quotes as '\'' (a discovered
 * model's file and name in its command): false when out is too short. */
bool confstores_quote(const char *s, char *out, size_t len);

#endif
