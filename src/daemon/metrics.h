/* metrics: the daemon's state in Prometheus' text exposition format. */
#ifndef VRAM_DAEMON_METRICS_H
#define VRAM_DAEMON_METRICS_H

#include "daemon/daemon.h"

/* A new string (caller frees), NULL on no memory. */
char *metrics_render(const struct daemon *d);

#endif
