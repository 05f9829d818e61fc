/* color: whether vram's output is coloured. --color=auto (the default)
 * colours a terminal unless $NO_COLOR is set (to anything but "") or TERM
 * is "dumb"; --color=always and --color=never decide outright, before
 * NO_COLOR. One choice per process, made by main.c and the commands that
 * take --color. */
#ifndef VRAM_CLI_COLOR_H
#define VRAM_CLI_COLOR_H

#include <stdbool.h>
#include <stdio.h>

enum color_when { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER };

/* "auto", "always", "never" (also "yes"/"no"); -1 for anything else. */
int color_parse(const char *when, enum color_when *out);

void color_choose(enum color_when w);

/* Whether text written to f gets colours. */
bool color_on(FILE *f);

#endif
