/* serve: the entry point of `vram serve`, the daemon. What the command
 * line sees of it: no libevent, no tables. */
#ifndef VRAM_DAEMON_SERVE_H
#define VRAM_DAEMON_SERVE_H

#include <stddef.h>

#include "daemon/config.h"

/* Reads config_path, serves until SIGTERM or SIGINT has stopped every
 * model: 0, or -1 with err for a daemon that could not start. */
int serve_run(const char *config_path, char *err, size_t len);

/* The models discover = finds in the stores, added to c (daemon/discover.h):
 * 0, or -1 with err when there is no llama-server to run them. */
int serve_discover(struct config *c, char *err, size_t len);

/* libvramcap.so for the models that run under it (a cap, or fast swap):
 * its path into shim, or "" with why saying where it was looked for.
 * -1 with err naming the first model that needs it when it is missing:
 * the daemon then refuses to start, and --check fails, rather than run
 * that model without its cap or its fast swap. */
int serve_find_vramcap(const struct config *c, char *shim, size_t len, char *why, size_t wlen,
                       char *err, size_t errlen);

#endif
