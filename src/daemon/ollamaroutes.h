/* ollamaroutes: Ollama's own routes on the proxy's address, answered by the
 * daemon from its model table and the models' files: GET and HEAD /
 * ("Ollama is running"), /api/version, /api/tags, /api/ps, /api/show. It
 * owns what it read of each model's file (details), read once per file
 * version. */
#ifndef VRAM_DAEMON_OLLAMAROUTES_H
#define VRAM_DAEMON_OLLAMAROUTES_H

#include <stdbool.h>

#include "daemon/daemon.h"
#include "http/front.h"

/* The version /api/version says: that of Ollama's API the proxy speaks. */
#define OLLAMA_API_VERSION "0.11.0"

struct ollamaroutes;

struct ollamaroutes *ollamaroutes_new(struct daemon *d);

/* Answers r when path is one of the routes above; false when it is not. */
bool ollamaroutes_route(struct ollamaroutes *o, struct front_req *r, const char *path);

#endif
