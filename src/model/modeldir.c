/* modeldir: one way to open a model's files for every place they come from.
 * Plain folders are opened by path (a user's own links are theirs to
 * follow); store folders through storepath, beneath the store's root. */
#include "model/modeldir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "model/storepath.h"

void modeldir_plain(struct modeldir *d, const char *dir)
{
    d->root = -1;
    snprintf(d->dir, sizeof d->dir, "%s", dir);
    snprintf(d->shown, sizeof d->shown, "%s", dir);
}

void modeldir_beneath(struct modeldir *d, int root, const char *root_shown, const char *dir)
{
    d->root = root;
    snprintf(d->dir, sizeof d->dir, "%s", dir);
    snprintf(d->shown, sizeof d->shown, "%s/%s", root_shown, dir);
}

static void join(char *out, size_t len, const char *dir, const char *file)
{
    snprintf(out, len, "%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] != '/' ? "/" : "", file);
}

int modeldir_open(const struct modeldir *d, const char *file, struct reader *r, char *err,
                  size_t errlen)
{
    char path[4400], shown[4400];
    join(path, sizeof path, d->dir, file);
    join(shown, sizeof shown, d->shown, file);
    if (d->root < 0)
        return reader_open_file(r, path, err, errlen);
    mode_t kind;
    int fd = storepath_open(d->root, path, 0, &kind);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", shown, storepath_why(errno, kind));
        return VRAM_EINPUT;
    }
    return reader_open_fd(r, fd, shown, err, errlen);
}

bool modeldir_has(const struct modeldir *d, const char *file)
{
    char path[4400];
    join(path, sizeof path, d->dir, file);
    if (d->root < 0) {
        struct stat st;
        return lstat(path, &st) == 0;
    }
    mode_t kind;
    int fd = storepath_open(d->root, path, 0, &kind);
    if (fd < 0)
        return errno != ENOENT; /* there, but not to be read: opening it says why */
    close(fd);
    return true;
}

int modeldir_size(const struct modeldir *d, const char *file, uint64_t *bytes)
{
    char path[4400];
    join(path, sizeof path, d->dir, file);
    struct stat st;
    if (d->root < 0) {
        if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
            return -1;
        *bytes = (uint64_t)st.st_size;
        return 0;
    }
    mode_t kind;
    return storepath_size(d->root, path, bytes, &kind);
}

int modeldir_each(const struct modeldir *d, int (*each)(const char *name, void *arg), void *arg,
                  char *err, size_t errlen)
{
    mode_t kind;
    int fd = d->root < 0 ? open(d->dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC)
                         : storepath_open(d->root, d->dir, 1, &kind);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) {
        snprintf(err, errlen, "%s: %s", d->shown,
                 d->root < 0 ? strerror(errno) : storepath_why(errno, kind));
        if (fd >= 0)
            close(fd);
        return VRAM_EINPUT;
    }
    rewinddir(dir); /* the store's root itself ("") shares its position with every dup */
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(dir)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            rc = each(e->d_name, arg);
    closedir(dir);
    return rc;
}

int modeldir_parse(const struct modeldir *d, const char *file,
                   int (*parse)(struct reader *r, const char *name, void *arg), void *arg,
                   char *err, size_t errlen)
{
    struct reader *r = malloc(sizeof *r); /* its window is 64 KiB: not on the stack */
    if (!r)
        return VRAM_EFAIL;
    int rc = modeldir_open(d, file, r, err, errlen);
    if (rc == VRAM_OK) {
        char shown[4400];
        join(shown, sizeof shown, d->shown, file);
        rc = parse(r, shown, arg);
        reader_close(r);
    }
    free(r);
    return rc;
}
