/* winstatus: `vram status` on Windows: the same report as on Linux (the
 * renderers of app/), from the Windows probe. */
#ifndef VRAM_WIN_WINSTATUS_H
#define VRAM_WIN_WINSTATUS_H

#include "cli/cmd.h"

extern const struct cmd_entry winstatus_entry;

#endif
