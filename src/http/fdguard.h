/* fdguard: a listener that runs out of file descriptors pauses for a
 * moment instead of spinning, and says so once a minute, with a count;
 * one that has enough connections (its cap, fdguard_cap) is held paused. */
#ifndef VRAM_DAEMON_FDGUARD_H
#define VRAM_DAEMON_FDGUARD_H

#include <stdbool.h>

struct evconnlistener;
struct fdguard;

/* Watches l's accept errors; what names it in the log ("the proxy").
 * NULL on no memory (the listener then works unguarded). */
struct fdguard *fdguard_watch(struct evconnlistener *l, const char *what);

/* The listeners, each with a share of the descriptor limit. */
enum fdguard_kind { FDGUARD_PROXY, FDGUARD_CONTROL, FDGUARD_METRICS };

/* How many connections a listener of kind may hold at once. A quarter of
 * the limit (32 to 1024) stays for the models, logs and state; of the
 * rest, the control socket has an eighth (32 to 512), the metrics address
 * a sixty-fourth (8 to 64), the proxy what is left: a flood of idle
 * connections on one takes none of the others' (issue 28). */
unsigned fdguard_cap(enum fdguard_kind kind);

/* Held: l accepts nothing until released (a pause for lack of
 * descriptors still runs its course). */
void fdguard_hold(struct fdguard *g, bool hold);

#endif
