/* serve: the entry point of `vram serve`, the daemon. What the command
 * line sees of it: no libevent, no tables. */
#ifndef VRAM_DAEMON_SERVE_H
#define VRAM_DAEMON_SERVE_H

#include <stddef.h>

/* Reads config_path, serves until SIGTERM or SIGINT has stopped every
 * model: 0, or -1 with err for a daemon that could not start. */
int serve_run(const char *config_path, char *err, size_t len);

#endif
