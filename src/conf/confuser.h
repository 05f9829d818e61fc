/* confuser: who each model of vram serve runs as. user = and group = (in
 * [serve] for every model, in a [model] for one); a daemon run as root
 * runs a model that names none as CONFUSER_DEFAULT, the unprivileged
 * system user the package makes, and never as root or as a member of the
 * control socket's group; a user's daemon runs its models as that user.
 * Resolved once per reading of the configuration (start, --check, each
 * reload), never on the loop's way to a start. */
#ifndef VRAM_CONF_CONFUSER_H
#define VRAM_CONF_CONFUSER_H

#include <stddef.h>

#include "conf/config.h"

#define CONFUSER_DEFAULT      "vram-model"
#define CONFUSER_SOCKET_GROUP "vram" /* the control socket's (daemon/api.c) */

/* Resolves each model's user into its run (run.on false: the daemon's
 * own): 0, or -1 with err naming the model, the setting and the fix. */
int confuser_resolve(struct config *c, char *err, size_t len);

/* What model m's user may not open of what it needs, asked as that user:
 * libvramcap (shim, where m runs under it: -1, since its cap and fast
 * swap would be lost), and with a warning in warn (0): its file =, its
 * program when the command names it by path, the GPUs' control device.
 * 0 with warn "" when all is well. */
int confuser_check_files(const struct config_model *m, const char *shim, char *warn, size_t wlen,
                         char *err, size_t len);

#endif
