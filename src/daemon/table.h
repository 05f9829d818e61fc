/* table: the rows of the daemon's model table (daemon.h), made and
 * changed from the configuration. */
#ifndef VRAM_DAEMON_TABLE_H
#define VRAM_DAEMON_TABLE_H

#include "conf/config.h"
#include "daemon/daemon.h"

/* A new row at the end for c, stopped. */
void table_add(struct daemon *d, const struct config_model *c);

/* Row i takes c's settings (its state stays). */
void table_set(struct daemon *d, unsigned i, const struct config_model *c);

/* Whether every model of c with a vram could ever be placed on the GPUs
 * as the scheduler has them: 0, or -1 with err "FILE:LINE: ..." (a start
 * or a reload is refused, rather than every demand for it). */
int table_check_sizes(const struct daemon *d, const struct config *c, char *err, size_t len);

#endif
