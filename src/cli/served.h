/* served: which processes of a snapshot are models of a vram serve, by
 * the daemons' state files and cgroups, in a way no other user can fool
 * (served.c says how). */
#ifndef VRAM_CLI_SERVED_H
#define VRAM_CLI_SERVED_H

#include <stddef.h>

#include "core/snapshot.h"

/* Sets each process's model to the name of the vram serve model it
 * belongs to ("" for none), reading the state of the daemon vram serve
 * would run here ($VRAM_CONFIG, else this user's configuration) and the
 * system's. How many processes are models'. */
size_t served_mark(struct snap *s);

#endif
