/* usercache: the folder and its files, each looked at before it is
 * trusted: a directory (a regular file) owned by this user, writable by no
 * one else, reached without following a symbolic link at its last step. */
#include "host/usercache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool ours(const struct stat *st, mode_t type)
{
    return (st->st_mode & S_IFMT) == type && st->st_uid == geteuid() && !(st->st_mode & 022);
}

/* The cache folder's path and an open descriptor on it (-1: none of ours);
 * make: create the vram folder when its parent is ours. */
static int open_folder(bool make)
{
    char base[PATH_MAX], dir[PATH_MAX + 8];
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/')
        snprintf(base, sizeof base, "%s", xdg);
    else if (home && home[0] == '/')
        snprintf(base, sizeof base, "%s/.cache", home);
    else
        return -1;
    struct stat st;
    /* the parent ours too: root's cache is not made in a user's home, as
     * sudo may leave HOME; a missing one is made (0700, as XDG says) in a
     * folder of ours */
    if (make && stat(base, &st) < 0 && errno == ENOENT) {
        char up[PATH_MAX];
        snprintf(up, sizeof up, "%s", base);
        char *slash = strrchr(up, '/');
        if (slash && slash != up)
            *slash = '\0';
        if (slash && slash != up && stat(up, &st) == 0 && ours(&st, S_IFDIR))
            mkdir(base, 0700);
    }
    if (stat(base, &st) < 0 || !ours(&st, S_IFDIR))
        return -1;
    snprintf(dir, sizeof dir, "%s/vram", base);
    if (make && mkdir(dir, 0700) < 0 && errno != EEXIST)
        return -1;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 && (fstat(fd, &st) < 0 || !ours(&st, S_IFDIR))) {
        close(fd);
        return -1;
    }
    return fd;
}

static bool plain_name(const char *name)
{
    return name[0] && name[0] != '.' && !strchr(name, '/') && strlen(name) < 64;
}

long usercache_read(const char *name, char *buf, size_t len)
{
    int dir = plain_name(name) && len ? open_folder(false) : -1;
    if (dir < 0)
        return -1;
    int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    close(dir);
    struct stat st;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0 || !ours(&st, S_IFREG) || (size_t)st.st_size >= len) {
        close(fd);
        return -1;
    }
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return (long)n;
}

int usercache_write(const char *name, const char *text)
{
    int dir = plain_name(name) ? open_folder(true) : -1;
    if (dir < 0)
        return -1;
    char tmp[96];
    snprintf(tmp, sizeof tmp, ".%s.%ld", name, (long)getpid());
    unlinkat(dir, tmp, 0);
    int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    size_t len = strlen(text);
    bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
    if (fd >= 0)
        ok &= close(fd) == 0;
    ok = ok && renameat(dir, tmp, dir, name) == 0;
    if (!ok)
        unlinkat(dir, tmp, 0);
    close(dir);
    return ok ? 0 : -1;
}
