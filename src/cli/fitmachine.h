/* fitmachine: what the machine holds now, for vram fit: each GPU's free
 * and total memory and who holds it (processes, and the models of vram
 * serve, which can be suspended), and the footprints vram serve measured. */
#ifndef VRAM_CLI_FITMACHINE_H
#define VRAM_CLI_FITMACHINE_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/fitview.h"

struct config;
struct store;

struct fitmachine_serve {
    struct config *cfg;  /* NULL: no configuration */
    struct store *store; /* NULL: no store readable */
};

/* GPUs from the driver (none when there is none), with their holders. */
void fitmachine_gpus(struct fit_report *r, const struct fitmachine_serve *s);

/* vram serve's configuration (path, or the default one when it is there)
 * and its store, read only. VRAM_EINPUT when path was given and is bad. */
int fitmachine_serve_open(struct fitmachine_serve *s, const char *path, char *err, size_t errlen);
void fitmachine_serve_close(struct fitmachine_serve *s);

/* The model file vram serve runs as name, or NULL. */
const char *fitmachine_served_file(const struct fitmachine_serve *s, const char *name);

/* What vram serve measured for the model at path (its configured file) or
 * named name, on each GPU's kind: into fm->learned and fm->learned_as. */
void fitmachine_learned(const struct fitmachine_serve *s, const struct fit_report *r,
                        const char *path, const char *name, struct fit_model *fm);

#endif
