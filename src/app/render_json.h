/* render_json: a snapshot as JSON, for scripts and the daemon's API. The
 * schema is documented in docs/status-json.md; change both together. */
#ifndef VRAM_APP_RENDER_JSON_H
#define VRAM_APP_RENDER_JSON_H

#include <jansson.h>

#include "core/snapshot.h"

/* A new JSON object for the snapshot (caller decrefs), NULL on no memory. */
json_t *render_json(const struct snap *s);

#endif
