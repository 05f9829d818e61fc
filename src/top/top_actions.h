/* top_actions: what `vram top` does to a process on Linux. Signals (after
 * a y), with kill's rule; suspend, resume and a model's stop run as the
 * commands themselves (vram suspend, resume, unload: their rules, their
 * words), as children whose last line shows when they end; the details
 * pane's command line and cgroup, and what vram serve says of a model
 * (vram ps --json, a child too: a daemon slow to answer never holds the
 * screen). */
#ifndef VRAM_TOP_TOP_ACTIONS_H
#define VRAM_TOP_TOP_ACTIONS_H

#include <poll.h>

#include "top/top_draw.h"
#include "probe/probe.h"

/* The operations for t->ops, on probe p (its /proc for details and the
 * tree's parents); with may_act false (a --proc-root), no signals, no
 * suspends. */
const struct top_ops *top_actions_ops(struct probe *p, bool may_act);

/* After a process list: the models of vram serve marked on t->snap
 * (cli/served.h), and t->away anew: the processes this user (or root)
 * suspended with vram suspend, alive still, and the models whose process
 * holds no GPU; neither is in the driver's lists. */
void top_actions_away(struct top *t);

/* The children's pipes, to wait on with the keyboard: how many written
 * to fds (max at most). */
int top_actions_fds(struct pollfd *fds, int max);

/* Reads what the children said; one that ended says its outcome in t->msg
 * (or, for vram ps, in t->info). True when something changed on screen. */
bool top_actions_poll(struct top *t);

/* Whether a child runs (the loop then looks for its end often). */
bool top_actions_busy(void);

/* Leaves: a command still running goes on alone, its output to nobody. */
void top_actions_end(void);

#endif
