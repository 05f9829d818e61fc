/* reload: applying a changed configuration to a running daemon. */
#ifndef VRAM_DAEMON_RELOAD_H
#define VRAM_DAEMON_RELOAD_H

#include "daemon/daemon.h"

/* Reads d->cfg.path again; a broken file changes nothing (and says why). */
void reload_config(struct daemon *d);

/* From now on SIGHUP reloads (reload_config, on the loop): 0, or -1. */
int reload_listen(struct daemon *d);

#endif
