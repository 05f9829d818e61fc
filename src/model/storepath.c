/* storepath: a store's paths resolved beneath its root by host/beneath.c,
 * links followed while they stay inside (stores are laid out with relative
 * links: the Hugging Face cache's snapshots point into its blobs). */
#include "model/storepath.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/beneath.h"
#include "model/reader.h"

int storepath_open(int root, const char *path, int dir, mode_t *kind)
{
    return beneath_open(root, path, (dir ? BENEATH_DIR : 0) | BENEATH_LINKS, kind);
}

int storepath_list(int root, const char *path, int (*each)(const char *name, void *arg),
                   void *arg, unsigned max)
{
    mode_t kind;
    int fd = storepath_open(root, path, 1, &kind);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        errno = e;
        return -1;
    }
    rewinddir(d); /* "" is the root's own descriptor, duplicated: its position is shared */
    struct dirent *e;
    int rc = 0;
    unsigned n = 0;
    while (!rc && n < max && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            rc = each(e->d_name, arg);
            n++;
        }
    closedir(d);
    return rc;
}

int storepath_size(int root, const char *path, uint64_t *size, mode_t *kind)
{
    struct stat st;
    int fd = storepath_open(root, path, 0, kind);
    if (fd < 0)
        return -1;
    int rc = fstat(fd, &st);
    close(fd);
    *size = rc == 0 ? (uint64_t)st.st_size : 0;
    return rc;
}

int storepath_text(int root, const char *path, char *buf, size_t len)
{
    mode_t kind;
    int fd = storepath_open(root, path, 0, &kind);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, len);
    int e = errno;
    close(fd);
    if (n < 0)
        return errno = e, -1;
    if ((size_t)n >= len)
        return errno = EFBIG, -1;
    buf[n] = '\0';
    return 0;
}

const char *storepath_why(int err, mode_t kind)
{
    if (err == EXDEV)
        return "it leads outside the store (a link out of it, or \"..\" above it)";
    if (err == ELOOP)
        return "too many links";
    if (err == EFBIG)
        return "too big for what it should be";
    if (err == EINVAL && kind)
        return reader_kind(kind);
    return strerror(err);
}
