/* top_os: what `vram top` asks of the OS, below the command (cli/cmd_top.c):
 * what it may do to a process, the screen it draws on and the keys it
 * reads. On Linux, curses on the terminal and a poll on the keys and the
 * children top runs (top/top_os.c, over top_actions.c and top_once.c); on
 * Windows, the console (win/wintop.c). */
#ifndef VRAM_TOP_TOP_OS_H
#define VRAM_TOP_TOP_OS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "top/top_draw.h"
#include "probe/probe.h"

/* The operations for t->ops, over probe p; with may_act false (the
 * processes of a --proc-root), none that acts on a process. */
const struct top_ops *top_os_ops(struct probe *p, bool may_act);

/* After a sample of this machine's process lists: the rows the OS adds
 * (on Linux, the processes away from their GPU, and vram serve's models). */
void top_os_away(struct top *t);

/* Whether the live view can run here (its input and output a terminal);
 * false with why, and what to use instead, said on stderr. */
bool top_os_can_show(void);

/* Who runs top and what its screen draws: t->uid, t->utf8. */
void top_os_start(struct top *t);

/* The live view's screen, taken over, t->color set: 0, or -1 said. */
int top_os_open(struct top *t);
/* Shows what top_draw drew. */
void top_os_show(void);
/* Waits up to ms for a key, or the word of a child top runs: true when
 * what the screen shows changed meanwhile. */
bool top_os_wait(struct top *t, uint64_t ms);
/* The next key waiting, in curses's codes, or -1. */
int top_os_key(const struct top *t);
/* The screen given back as it was. */
void top_os_close(void);

/* --once: the frame top_draw draws, printed to out as text (colours as
 * out takes them, t->color): 0, or 1 with why said. */
int top_os_frame(struct top *t, FILE *out);

/* top leaves: what it started goes on alone. */
void top_os_end(void);

#endif
