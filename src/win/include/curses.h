/* curses: what top/top_draw.c includes as <curses.h>, on Windows: the part
 * of curses it draws with, drawn into a buffer (win/wincurses.c), since
 * there is no ncurses for mingw. Only the Windows build puts this folder
 * on the include path. */
#ifndef VRAM_WIN_CURSES_H
#define VRAM_WIN_CURSES_H

#include "win/wincurses.h"

#endif
