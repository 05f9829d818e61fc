/* top_json: `vram top --once --json`: the snapshot as `vram status --json`
 * gives it, and top's list as it stands (filter, sort, tree) under "top". */
#ifndef VRAM_TOP_TOP_JSON_H
#define VRAM_TOP_TOP_JSON_H

#include <jansson.h>

#include "top/top_draw.h"

/* A new document (caller decrefs); NULL when out of memory. */
json_t *top_json(const struct top *t);

#endif
