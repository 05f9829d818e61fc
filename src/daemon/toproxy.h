/* toproxy: the daemon's side of the proxy's table of operations
 * (proxy/proxyops.h): the model table read, the scheduler asked, as the
 * proxy may; the only place the two meet. */
#ifndef VRAM_DAEMON_TOPROXY_H
#define VRAM_DAEMON_TOPROXY_H

#include <stddef.h>

#include "daemon/daemon.h"

/* Starts the proxy on d->cfg.listen into d->proxy (NULL when listen = is
 * empty): 0, or -1 with err. */
int toproxy_listen(struct daemon *d, char *err, size_t len);

#endif
