/* served: which processes of a snapshot are models of a vram serve, by
 * the daemons' state files and cgroups, in a way no other user can fool
 * (served.c says how). */
#ifndef VRAM_CLI_SERVED_H
#define VRAM_CLI_SERVED_H

#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"

/* Sets each process's model to the name of the vram serve model it
 * belongs to ("" for none), reading the state of the daemon vram serve
 * would run here ($VRAM_CONFIG, else this user's configuration) and the
 * system's. How many processes are models'. */
size_t served_mark(struct snap *s);

/* A model's main process, as a daemon's state names it (alive: the same
 * start time). */
struct served_main {
    uint32_t pid;
    char model[SNAP_NAME_MAX];
};

/* served_mark, and the models' main processes into out (up to max; how
 * many into *nout), from the same reading of the daemons' state. */
size_t served_mark_mains(struct snap *s, struct served_main *out, size_t max, size_t *nout);

#endif
