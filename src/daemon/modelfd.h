/* modelfd: a discovered model's file for one start of its server, never a
 * path someone can change afterwards. A store may be writable by others
 * (a shared Hugging Face cache, an Ollama store of a group): once, a user
 * swapped a blob for a link to another user's 0600 GGUF after the scan,
 * and the server the daemon started opened it. So at each start the file
 * (and its other parts, a split GGUF's) is opened beneath the store's real
 * root with no link followed (its path was real when the store was read:
 * a link there now was put there since), only a regular file; the server
 * gets the open files as descriptors 3, 4, ... and, for -m, a path in a
 * folder of the daemon's whose links name /proc/self/fd/3, 4, ...: each
 * opener's own descriptors, so the path leads nowhere else, for anyone. */
#ifndef VRAM_DAEMON_MODELFD_H
#define VRAM_DAEMON_MODELFD_H

#include <stddef.h>

#include "conf/config.h"

#define MODELFD_MAX 32 /* parts of a split GGUF */

struct modelfd {
    int fd[MODELFD_MAX]; /* the parts, in order: descriptors 3, 4, ... of the server */
    unsigned n;
    char path[CONFIG_PATH_MAX + 300]; /* what -m names: the first part's link */
};

/* Opens m's file and parts beneath its store, and makes their links in
 * DIR/NAME (DIR: a folder of the daemon's; made if missing, refused if it
 * is not this user's, a link, or writable by others): 0, or -1 with err
 * (nothing left open). */
int modelfd_open(struct modelfd *f, const struct config_model *m, const char *dir, char *err,
                 size_t len);

void modelfd_close(struct modelfd *f);

#endif
