/* ollamaroutes: Ollama's own routes on the proxy's address, answered by the
 * daemon's model table (proxyops.h) and the models' files: / ("Ollama is
 * running"), /api/version, /api/tags, /api/ps, /api/show (the routes'
 * rows are in proxy/routes.c). It owns what it read of each model's file
 * (details), read once per file version. */
#ifndef VRAM_PROXY_OLLAMAROUTES_H
#define VRAM_PROXY_OLLAMAROUTES_H

#include <stdbool.h>

#include "http/front.h"
#include "proxy/proxyops.h"

/* The version /api/version says: that of Ollama's API the proxy speaks. */
#define OLLAMA_API_VERSION "0.11.0"

struct ollamaroutes;

/* ops: the daemon's table (proxyops.h), kept by the caller. */
struct ollamaroutes *ollamaroutes_new(const struct proxyops *ops);

/* Each answers r (its route, its method: proxy/routes.c): GET and HEAD /
 * ("Ollama is running", as Ollama answers HEAD too), /api/version and
 * /api/tags; GET /api/ps; POST /api/show. */
void ollamaroutes_root(struct ollamaroutes *o, struct front_req *r);
void ollamaroutes_version(struct ollamaroutes *o, struct front_req *r);
void ollamaroutes_tags(struct ollamaroutes *o, struct front_req *r);
void ollamaroutes_ps(struct ollamaroutes *o, struct front_req *r);
void ollamaroutes_show(struct ollamaroutes *o, struct front_req *r);

#endif
