/* render_text: a snapshot as people read it: the "where did my VRAM go"
 * report, and the names of process types and states. */
#ifndef VRAM_APP_RENDER_TEXT_H
#define VRAM_APP_RENDER_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/snapshot.h"

/* The "where did my VRAM go" report; all processes too when verbose. */
void render_text(FILE *out, const struct snap *s, bool verbose);

/* "compute", "graphics", "compute+graphics", "mps", "device-file" */
const char *render_ptype(unsigned types, char *buf, size_t len);

const char *render_pstate(enum snap_pstate st);

#endif
