/* beneath: a path resolved beneath a folder held open, by hand, one
 * component at a time, each opened relative to its parent with O_NOFOLLOW.
 * With BENEATH_LINKS a link is read and its target put in front of what is
 * left, so it is resolved by the same rules; ".." pops the stack of folders
 * held open, so it can never go above the root whatever the links say.
 * Without it, any link on the way is refused. Either way a component
 * swapped for a link between two steps fails to open rather than being
 * followed. (openat2's RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS do this in
 * the kernel, but are missing from older kernels and refused by some
 * sandboxes: one way everywhere is one way tested.) */
#include "host/beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 64
#define MAX_LINKS 40

/* The first component of rest, cut off it into name. */
static int take(char *rest, char *name, size_t len)
{
    char *p = rest;
    while (*p == '/')
        p++;
    size_t n = strcspn(p, "/");
    if (n >= len)
        return -1;
    memcpy(name, p, n);
    name[n] = '\0';
    memmove(rest, p + n, strlen(p + n) + 1);
    return 0;
}

static void drop(int *stack, int depth)
{
    for (int i = 0; i <= depth; i++)
        close(stack[i]);
}

int beneath_open(int root, const char *path, int flags, mode_t *kind)
{
    char rest[8192], name[256];
    int stack[MAX_DEPTH + 1], depth = 0, links = 0, e = 0;
    bool dir = flags & BENEATH_DIR;
    *kind = 0;
    if (strlen(path) >= sizeof rest / 2)
        return errno = ENAMETOOLONG, -1;
    snprintf(rest, sizeof rest, "%s", path);
    if ((stack[0] = fcntl(root, F_DUPFD_CLOEXEC, 0)) < 0)
        return -1;
    for (;;) {
        if (take(rest, name, sizeof name) < 0) {
            e = ENAMETOOLONG;
            break;
        }
        bool last = strspn(rest, "/") == strlen(rest);
        if (!name[0] || !strcmp(name, ".")) {
            if (!last)
                continue;
            if (!dir) { /* "" names the folder, not a file */
                *kind = S_IFDIR;
                e = EINVAL;
                break;
            }
            drop(stack, depth - 1);
            return stack[depth]; /* the folder we are in */
        }
        if (!strcmp(name, "..")) {
            if (!depth) {
                e = EXDEV;
                break;
            }
            close(stack[depth--]);
            if (last)
                snprintf(rest, sizeof rest, ".");
            continue;
        }
        struct stat st;
        if (fstatat(stack[depth], name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            e = errno;
            break;
        }
        if (S_ISLNK(st.st_mode) && !(flags & BENEATH_LINKS)) {
            *kind = S_IFLNK; /* as openat2's RESOLVE_NO_SYMLINKS says it */
            e = ELOOP;
            break;
        }
        if (S_ISLNK(st.st_mode)) {
            char target[4096];
            ssize_t n = readlinkat(stack[depth], name, target, sizeof target - 1);
            if (n <= 0 || ++links > MAX_LINKS) {
                e = n <= 0 ? errno : ELOOP;
                break;
            }
            target[n] = '\0';
            if (target[0] == '/' && !(flags & BENEATH_IN_ROOT)) {
                e = EXDEV; /* an absolute link: a store lays out relative ones */
                break;
            }
            while (target[0] == '/' && depth > 0) /* from the root again */
                close(stack[depth--]);
            if (strlen(target) + strlen(rest) + 2 > sizeof rest) {
                e = ENAMETOOLONG;
                break;
            }
            memmove(rest + n + 1, rest, strlen(rest) + 1);
            memcpy(rest, target, (size_t)n);
            rest[n] = '/';
            if (last)
                rest[n] = '\0', rest[n + 1] = '\0';
            continue;
        }
        if (!last || dir) {
            if (!S_ISDIR(st.st_mode)) {
                e = ENOTDIR;
                break;
            }
            if (depth == MAX_DEPTH) {
                e = ENAMETOOLONG;
                break;
            }
            int fd = openat(stack[depth], name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0) {
                e = errno;
                break;
            }
            stack[++depth] = fd;
            if (last) {
                drop(stack, depth - 1);
                return stack[depth];
            }
            continue;
        }
        if (!S_ISREG(st.st_mode)) {
            *kind = st.st_mode & S_IFMT; /* never opened: a FIFO would wait */
            e = EINVAL;
            break;
        }
        int fd = openat(stack[depth], name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        e = errno;
        drop(stack, depth);
        if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
            *kind = st.st_mode & S_IFMT;
            close(fd);
            return errno = EINVAL, -1;
        }
        return fd < 0 ? (errno = e, -1) : fd;
    }
    drop(stack, depth);
    errno = e;
    return -1;
}

ssize_t beneath_read_text(int root, const char *path, char *buf, size_t len)
{
    mode_t kind;
    if (len == 0)
        return errno = EINVAL, -1;
    buf[0] = '\0';
    int fd = beneath_open(root, path, BENEATH_LINKS | BENEATH_IN_ROOT, &kind);
    if (fd < 0)
        return -1;
    size_t have = 0;
    while (have < len - 1) {
        ssize_t n = read(fd, buf + have, len - 1 - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        have += (size_t)n;
    }
    close(fd);
    buf[have] = '\0';
    return (ssize_t)have;
}
