/* top_once: `vram top --once` on Linux: one frame, drawn by the same code
 * as the live view into a curses screen that is never shown (its output
 * goes to /dev/null), then printed as text, with colours when asked: for
 * scripts and bug reports, with no terminal needed. */
#ifndef VRAM_TOP_TOP_ONCE_H
#define VRAM_TOP_TOP_ONCE_H

#include <stdbool.h>
#include <stdio.h>

#include "top/top_draw.h"

/* The frame's size: $LINES and $COLUMNS where set, else the terminal's
 * when out is one, else 80x24. */
void top_once_size(FILE *out, int *rows, int *cols);

/* Opens the hidden screen (rows x cols). 0, or -1 with why in err. */
int top_once_open(int rows, int cols, char *err, size_t len);

/* Draws t and prints the frame to out: trailing blanks cut, SGR codes
 * where color. */
void top_once_print(struct top *t, FILE *out, bool color);

void top_once_close(void);

#endif
