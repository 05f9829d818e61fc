/* wintop: `vram top` on Windows: Linux's drawing (cli/top_draw.c) into a
 * console frame (win/wincurses.c), refreshed in place, or one frame with
 * --once. */
#ifndef VRAM_WIN_WINTOP_H
#define VRAM_WIN_WINTOP_H

#include "cli/cmd.h"

extern const struct cmd_entry wintop_entry;

#endif
