/* view: a snapshot as people and scripts read it, text or JSON. The JSON
 * schema is documented in docs/status-json.md; change both together. */
#ifndef VRAM_CLI_VIEW_H
#define VRAM_CLI_VIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "core/snapshot.h"

/* A new JSON object for the snapshot (caller decrefs), NULL on no memory. */
json_t *view_json(const struct snap *s);

/* The "where did my VRAM go" report; all processes too when verbose. */
void view_text(FILE *out, const struct snap *s, bool verbose);

/* "compute", "graphics", "compute+graphics", "mps", "device-file" */
const char *view_ptype(unsigned types, char *buf, size_t len);

const char *view_pstate(enum snap_pstate st);

#endif
