/* paths: the default places of the daemon's files, for root and for users. */
#include "app/paths.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SYSTEM_SOCKET "/run/vram/vram.sock"

/* $VAR if it is an absolute path (the XDG rule: a relative one is
 * ignored), else $HOME/fallback; "" when there is no home either. */
static void xdg(const char *var, const char *fallback, char *out, size_t len)
{
    const char *v = getenv(var);
    if (v && v[0] == '/') {
        snprintf(out, len, "%s", v);
        return;
    }
    const char *home = getenv("HOME");
    if (!home || home[0] != '/') {
        struct passwd *pw = getpwuid(getuid());
        home = pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
    }
    if (home)
        snprintf(out, len, "%s/%s", home, fallback);
    else
        out[0] = '\0';
}

void paths_default(struct paths *p)
{
    memset(p, 0, sizeof *p);
    if (getuid() == 0) {
        snprintf(p->config, sizeof p->config, "/etc/vram/vram.conf");
        snprintf(p->socket, sizeof p->socket, SYSTEM_SOCKET);
        snprintf(p->state, sizeof p->state, "/var/lib/vram/vram.db");
        snprintf(p->logs, sizeof p->logs, "/var/log/vram");
        return;
    }
    p->user = true;
    char base[PATHS_MAX - 32];
    xdg("XDG_CONFIG_HOME", ".config", base, sizeof base);
    snprintf(p->config, sizeof p->config, "%s/vram/vram.conf", base);
    xdg("XDG_STATE_HOME", ".local/state", base, sizeof base);
    snprintf(p->state, sizeof p->state, "%s/vram/vram.db", base);
    snprintf(p->logs, sizeof p->logs, "%s/vram/logs", base);
    /* no fallback for the socket: a folder in /tmp could be made first by
     * another user; $XDG_RUNTIME_DIR is the user's own (systemd sets it) */
    const char *run = getenv("XDG_RUNTIME_DIR");
    if (run && run[0] == '/')
        snprintf(p->socket, sizeof p->socket, "%s/vram/vram.sock", run);
    else
        snprintf(p->why, sizeof p->why,
                 "XDG_RUNTIME_DIR is not set (a login session or the user service sets it)");
}

const char *paths_client_socket(void)
{
    const char *e = getenv("VRAM_SOCKET");
    if (e && *e)
        return e;
    if (getuid() != 0) {
        static struct paths p;
        struct stat st;
        paths_default(&p);
        if (p.socket[0] && stat(p.socket, &st) == 0 && S_ISSOCK(st.st_mode))
            return p.socket;
    }
    return SYSTEM_SOCKET;
}

int paths_make_parent(const char *path, unsigned mode)
{
    char dir[PATHS_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(dir, mode) < 0 && errno != EEXIST)
            return -1;
        *p = c;
        if (!c)
            return 0;
    }
}
