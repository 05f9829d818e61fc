/* render_text: a snapshot as people read it: the "where did my VRAM go"
 * report, and the names of process types and states. */
#ifndef VRAM_APP_RENDER_TEXT_H
#define VRAM_APP_RENDER_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/snapshot.h"

enum render_flags {
    RENDER_PROCS = 1u << 0, /* every process, in a table under each GPU */
    RENDER_COLOR = 1u << 1, /* ANSI colours: each part as vram top draws it */
};

/* The "where did my VRAM go" report. */
void render_text(FILE *out, const struct snap *s, unsigned flags);

/* "compute", "graphics", "compute+graphics", "mps", "device-file" */
const char *render_ptype(unsigned types, char *buf, size_t len);

const char *render_pstate(enum snap_pstate st);

/* Windows's driver model as nvidia-smi names it: "WDDM", "TCC", "MCDM". */
const char *render_driver_model(enum snap_driver_model m);

#endif
