/* paths: where `vram serve` keeps its configuration, socket, state and
 * logs when the file does not say. As root (the system service): /etc,
 * /run, /var/lib and /var/log. As any other user (the user service, or by
 * hand): the XDG places, $XDG_CONFIG_HOME/vram, $XDG_RUNTIME_DIR/vram and
 * $XDG_STATE_HOME/vram, with the XDG defaults under $HOME. */
#ifndef VRAM_APP_PATHS_H
#define VRAM_APP_PATHS_H

#include <stdbool.h>
#include <stddef.h>

#define PATHS_MAX 512
/* The dashboard's URL with its key, beside the socket (SOCKET.ui): written
 * by vram serve (proxy/uikey.c), read by vram ui. */
#define PATHS_UI_SUFFIX ".ui"

struct paths {
    char config[PATHS_MAX]; /* vram.conf */
    char socket[PATHS_MAX]; /* the control API; "" when there is no place for it */
    char state[PATHS_MAX];  /* the SQLite file */
    char logs[PATHS_MAX];   /* a log file per model */
    bool user;              /* the XDG places */
    char why[200];          /* for socket "": what is missing */
};

/* The defaults for the user running this process. */
void paths_default(struct paths *p);

/* The socket a client should try: $VRAM_SOCKET, else (not root) the user
 * daemon's when it is there, else the system daemon's. */
const char *paths_client_socket(void);

/* mkdir -p of path's parent folder, each new folder with mode. 0 or -1. */
int paths_make_parent(const char *path, unsigned mode);

#endif
