/* top_keys: what each key does in top, on every OS: moving, sorting,
 * filtering, the tree, the panes, and the questions before a signal or a
 * stop; what the OS must carry out goes through t->ops. The callers turn
 * their keyboard's codes into curses' (KEY_UP...) first. */
#ifndef VRAM_TOP_TOP_KEYS_H
#define VRAM_TOP_TOP_KEYS_H

#include <stdbool.h>

#include "top/top_draw.h"

#define TOP_KEY_ESC 27

/* Answers one key; false when it quits. */
bool top_key(struct top *t, int ch);

/* The filter typed or given (--filter): t->filter and the list; -1 with
 * the reason in t->msg (the filter before stays). */
int top_set_filter(struct top *t, const char *text);

#endif
