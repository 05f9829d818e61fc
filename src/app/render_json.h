/* render_json: a snapshot as JSON, for scripts and the daemon's API. The
 * schema is documented in docs/status-json.md; change both together. */
#ifndef VRAM_APP_RENDER_JSON_H
#define VRAM_APP_RENDER_JSON_H

#include <jansson.h>

#include "core/doctor.h"
#include "core/snapshot.h"

/* How every JSON text vram writes prints its reals, given to each
 * json_dump*: 15 significant digits, the most that any decimal of that
 * many digits comes back from exactly (0.516, not jansson's default
 * 0.51600000000000001; a client's 0.7 passed through stays 0.7). */
#define RENDER_JSON_REALS JSON_REAL_PRECISION(15)

/* A new JSON object for the snapshot (caller decrefs), NULL on no memory. */
json_t *render_json(const struct snap *s);

/* One process of it, as the snapshot's lists give it (`vram top --json`'s
 * parents on no GPU too). */
json_t *render_json_proc(const struct snap_proc *p);

/* doctor's findings as `vram doctor --json` writes them, on Linux and
 * Windows alike (docs/json.md; its schema bumped on any incompatible
 * change). A new object (caller decrefs), NULL on no memory. */
#define RENDER_JSON_DOCTOR_SCHEMA 1
json_t *render_json_findings(const struct doc_finding *f, size_t n, int warnings);

#endif
