/* cmd_ui: `vram ui`, the dashboard of the running vram serve for whoever
 * may use its control socket: prints (and on a desktop opens) the URL
 * with the key the daemon keeps beside its socket (SOCKET.ui, readable by
 * the socket's own people only), which the page exchanges for a session.
 * docs/ui.md. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app/paths.h"
#include "cli/client.h"
#include "cli/cmd.h"

extern char **environ;

struct ui_opts {
    bool no_open;
    const char *socket;
};

static int cmd_ui(const void *opts, int argc, char **argv);

#define O struct ui_opts
static const struct cmd_opt ui_opts[] = {
    {"no-open", 0, CMD_FLAG(O, no_open), .help = "print the URL only (the default without a desktop)"},
    CMD_SOCKET_OPT(O, "the daemon's socket (default $VRAM_SOCKET, else a user daemon's in "
                      "$XDG_RUNTIME_DIR/vram, else /run/vram/vram.sock)"),
    {NULL},
};
#undef O

const struct cmd_entry cmd_ui_entry = {
    .name = "ui",
    .args = "[--no-open] [--socket PATH]",
    .summary = "open vram serve's dashboard in your browser, no token needed",
    .opts = ui_opts,
    .help = "Prints the dashboard's URL (its own address, ui = in [serve], beside the proxy's\n"
            "listen =; never the proxy's, where the models' pages are), with\n"
            "the key vram serve keeps beside its socket (SOCKET.ui: readable by the\n"
            "daemon's user and, for the system service, group vram, who may use the\n"
            "socket). The page exchanges it for a session of this browser (a cookie and\n"
            "a value only this page's address keeps): no token to configure, none given\n"
            "to anyone who cannot use the socket. The key changes at each start of the\n"
            "daemon. With a desktop ($DISPLAY or $WAYLAND_DISPLAY, and xdg-open) it is\n"
            "opened through a file of yours, so that the key never shows in a process's\n"
            "arguments. See docs/ui.md.\n",
    .size = sizeof(struct ui_opts),
    .exec = cmd_ui,
};

/* The URL from SOCKET.ui: a regular file of the socket's owner that no one
 * else may write (anyone could otherwise point vram ui at their own page). */
static int read_url(const char *sock, char *url, size_t len)
{
    char path[PATHS_MAX + 8];
    snprintf(path, sizeof path, "%s" PATHS_UI_SUFFIX, sock);
    struct stat ss, st;
    int fd = -1;
    if (stat(sock, &ss) < 0 || lstat(path, &st) < 0) {
        if (errno == ENOENT)
            fprintf(stderr,
                    "vram ui: vram serve at %s serves no page: it has no listen = address. Add "
                    "listen = 127.0.0.1:11500 to [serve] and restart it (or forward its socket: "
                    "ssh -L 8080:%s HOST, then http://localhost:8080/ui)\n",
                    sock, sock);
        else
            fprintf(stderr, "vram ui: %s: %s\n", path, strerror(errno));
        return 1;
    }
    if (!S_ISREG(st.st_mode) || st.st_uid != ss.st_uid || (st.st_mode & 022)) {
        fprintf(stderr,
                "vram ui: %s is not the daemon's (a regular file of uid %u, the socket's owner, "
                "that no one else may write): not opened\n",
                path, (unsigned)ss.st_uid);
        return 1;
    }
    if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)) < 0) {
        if (errno == EACCES)
            fprintf(stderr,
                    "vram ui: %s: permission denied: the dashboard's key is for those who may "
                    "use the daemon's socket (its user; group vram for the system service: "
                    "sudo usermod -aG vram $USER, then log in again)\n",
                    path);
        else
            fprintf(stderr, "vram ui: %s: %s\n", path, strerror(errno));
        return 1;
    }
    ssize_t n = read(fd, url, len - 1);
    close(fd);
    url[n > 0 ? n : 0] = '\0';
    url[strcspn(url, "\r\n")] = '\0';
    if (strncmp(url, "http://", 7) || !strstr(url, "/ui?key=") ||
        url[strspn(url, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:/?=.-_[]")]) {
        fprintf(stderr, "vram ui: %s holds no dashboard URL\n", path);
        return 1;
    }
    return 0;
}

/* Opens url through a page of the user's own (0600) that goes on to it:
 * the browser's arguments, which every local user may read, carry that
 * file's name and never the key. */
static void open_url(const char *url)
{
    const char *run = getenv("XDG_RUNTIME_DIR");
    char dir[PATHS_MAX], file[PATHS_MAX + 32];
    struct stat st;
    if (run && run[0] == '/' && stat(run, &st) == 0 && st.st_uid == getuid() &&
        !(st.st_mode & 077))
        snprintf(dir, sizeof dir, "%s", run);
    else if (snprintf(dir, sizeof dir, "/tmp/vram-ui-XXXXXX") < 0 || !mkdtemp(dir))
        return;
    snprintf(file, sizeof file, "%s/vram-ui-open.html", dir);
    unlink(file);
    int fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        fprintf(stderr, "vram ui: %s: %s: open the URL yourself\n", file, strerror(errno));
        return;
    }
    fprintf(f,
            "<!doctype html><meta charset=utf-8><meta http-equiv=refresh content=\"0;url=%s\">"
            "<title>vram</title><p><a href=\"%s\">vram's dashboard</a>\n",
            url, url);
    if (fclose(f) != 0)
        return;
    char *args[] = {"xdg-open", file, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    if (posix_spawnp(&pid, "xdg-open", &fa, NULL, args, environ) == 0)
        fprintf(stderr, "vram ui: opening it in your browser\n");
    else
        fprintf(stderr, "vram ui: xdg-open: %s: open the URL yourself\n", strerror(errno));
    posix_spawn_file_actions_destroy(&fa);
}

static bool desktop(void)
{
    const char *x = getenv("DISPLAY"), *w = getenv("WAYLAND_DISPLAY");
    if (!(x && *x) && !(w && *w))
        return false;
    const char *path = getenv("PATH");
    char buf[4096], exe[4200];
    snprintf(buf, sizeof buf, "%s", path ? path : "/usr/bin:/bin");
    char *save = NULL;
    for (char *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(exe, sizeof exe, "%s/xdg-open", d);
        if (access(exe, X_OK) == 0)
            return true;
    }
    return false;
}

static int cmd_ui(const void *opts, int argc, char **argv)
{
    (void)argc, (void)argv;
    const struct ui_opts *o = opts;
    bool open_it = !o->no_open;
    const char *sock = o->socket;
    sock = client_socket(sock);
    char err[512], url[512];
    json_t *r = NULL;
    long st = client_call(sock, "GET", "/v1/models", NULL, &r, err, sizeof err);
    json_decref(r);
    if (st != 200) { /* a file left by a daemon that died would be a dead key */
        fprintf(stderr, "vram ui: %s\n", st < 0 ? err : "the daemon refused the request");
        return 1;
    }
    if (read_url(sock, url, sizeof url))
        return 1;
    printf("%s\n", url);
    fflush(stdout);
    if (open_it && desktop())
        open_url(url);
    else if (open_it)
        fprintf(stderr, "vram ui: no desktop here ($DISPLAY, $WAYLAND_DISPLAY with xdg-open): "
                        "open the URL in a browser on this machine (from another, forward the "
                        "port first: ssh -L PORT:127.0.0.1:PORT HOST)\n");
    return 0;
}
