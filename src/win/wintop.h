/* wintop: what `vram top` asks of Windows (top/top_os.h): Linux's drawing
 * (top/top_draw.c) into a console frame (win/wincurses.c), refreshed in
 * place, the console's keys, one frame with --once. */
#ifndef VRAM_WIN_WINTOP_H
#define VRAM_WIN_WINTOP_H

#include "top/top_os.h"

#endif
