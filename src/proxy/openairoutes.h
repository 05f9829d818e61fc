/* openairoutes: OpenAI's own routes on the proxy's address, answered by
 * the daemon's model table (proxyops.h): GET /v1/models, the list, and GET
 * /v1/models/NAME, one (their rows are in proxy/routes.c). */
#ifndef VRAM_PROXY_OPENAIROUTES_H
#define VRAM_PROXY_OPENAIROUTES_H

#include "proxy/proxyops.h"

struct front_req;

/* The models, as OpenAI's list. */
void openairoutes_list(const struct proxyops *o, struct front_req *r);

/* The model name (URL-encoded, as the official clients send it: the path
 * past /v1/models/) means, or 404. */
void openairoutes_model(const struct proxyops *o, struct front_req *r, const char *name);

#endif
