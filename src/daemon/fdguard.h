/* fdguard: a listener that runs out of file descriptors pauses for a
 * moment instead of spinning, and says so once a minute, with a count;
 * one that has enough connections (the proxy's cap) can be held paused. */
#ifndef VRAM_DAEMON_FDGUARD_H
#define VRAM_DAEMON_FDGUARD_H

#include <stdbool.h>

struct evconnlistener;
struct fdguard;

/* Watches l's accept errors; what names it in the log ("the proxy").
 * NULL on no memory (the listener then works unguarded). */
struct fdguard *fdguard_watch(struct evconnlistener *l, const char *what);

/* Held: l accepts nothing until released (a pause for lack of
 * descriptors still runs its course). */
void fdguard_hold(struct fdguard *g, bool hold);

#endif
