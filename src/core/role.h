/* role: what a GPU process is for, the desktop, a workload or something else.
 * One table of rules, read top to bottom; the first that matches wins. */
#ifndef VRAM_CORE_ROLE_H
#define VRAM_CORE_ROLE_H

#include "core/snapshot.h"

/* name: the executable's base name (comm or argv[0]); types: snap_ptype bits. */
enum snap_role role_of(const char *name, unsigned types);

const char *role_name(enum snap_role r);

/* The file name in a path, after the last '/' or '\\' (Windows paths). */
const char *role_base(const char *path);

#endif
