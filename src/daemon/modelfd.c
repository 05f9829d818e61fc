/* modelfd: a discovered model's files, opened beneath their store for one
 * start of its server, handed over as descriptors behind links to
 * /proc/self/fd/N. */
#include "daemon/modelfd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/modelname.h"
#include "host/beneath.h"
#include "model/ggufname.h"

static void close_all(struct modelfd *f)
{
    for (unsigned k = 0; k < f->n; k++)
        close(f->fd[k]);
    f->n = 0;
}

void modelfd_close(struct modelfd *f)
{
    close_all(f);
}

/* A folder at name in dirfd, made if missing, that only this user writes
 * and no link leads to: its descriptor, or -1. */
static int own_folder(int dirfd, const char *name)
{
    if (mkdirat(dirfd, name, 0755) < 0 && errno != EEXIST)
        return -1;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022))) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

/* The model's folder of links, emptied: its descriptor, or -1 with err. */
static int link_folder(const char *dir, const char *name, char *err, size_t len)
{
    char file[MODELNAME_MAX * 3];
    if (modelname_file(name, file, sizeof file) < 0)
        snprintf(file, sizeof file, "model");
    int top = own_folder(AT_FDCWD, dir);
    int fd = top >= 0 ? own_folder(top, file) : -1;
    if (top >= 0)
        close(top);
    if (fd < 0) {
        snprintf(err, len, "%s/%s: %s (a folder of the daemon's that only it writes)", dir, file,
                 strerror(errno));
        return -1;
    }
    /* the links of its last start: names of parts it may no longer have */
    int dup_fd = dup(fd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlinkat(fd, e->d_name, 0);
    if (d)
        closedir(d);
    else if (dup_fd >= 0)
        close(dup_fd);
    return fd;
}

static int open_part(int root, const char *rel, const char *shown, char *err, size_t len)
{
    mode_t kind = 0;
    int fd = beneath_open(root, rel, 0, &kind);
    if (fd >= 0)
        return fd;
    /* the path last: the scheduler's error keeps the first 160 bytes */
    if (errno == ELOOP)
        snprintf(err, len,
                 "its file is a link now, not followed (the store had the file itself; vram "
                 "reads the stores again on SIGHUP): %s",
                 shown);
    else if (errno == EINVAL)
        snprintf(err, len, "its file is not a regular file now, not opened: %s", shown);
    else
        snprintf(err, len, "its file: %s: %s", strerror(errno), shown);
    return -1;
}

int modelfd_open(struct modelfd *f, const struct config_model *m, const char *dir, char *err,
                 size_t len)
{
    f->n = 0;
    size_t flen = strlen(m->file);
    if (!m->source[0] || m->store_len >= flen || m->file[m->store_len] != '/') {
        snprintf(err, len, "%s: not a file of a store", m->file);
        return -1;
    }
    char root[CONFIG_PATH_MAX];
    snprintf(root, sizeof root, "%.*s", m->store_len ? (int)m->store_len : 1,
             m->store_len ? m->file : "/");
    const char *rel = m->file + m->store_len + 1;
    int rfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (rfd < 0) {
        snprintf(err, len, "%s: %s (the store of %s)", root, strerror(errno), m->file);
        return -1;
    }
    /* a split GGUF's other parts, named as llama.cpp looks for them */
    const char *base = strrchr(rel, '/');
    base = base ? base + 1 : rel;
    struct ggufname g;
    unsigned parts = ggufname_parse(base, &g) && g.parts >= 2 && g.part == 1 ? g.parts : 1;
    if (parts > MODELFD_MAX) {
        snprintf(err, len, "%s: %u parts, more than %d", m->file, parts, MODELFD_MAX);
        close(rfd);
        return -1;
    }
    size_t stem = strlen(rel) - 20; /* "-00001-of-00003.gguf" */
    for (unsigned k = 1; k <= parts; k++) {
        char part[CONFIG_PATH_MAX], shown[CONFIG_PATH_MAX + 16];
        if (k == 1)
            snprintf(part, sizeof part, "%s", rel);
        else
            snprintf(part, sizeof part, "%.*s-%05u-of-%05u.gguf", (int)stem, rel, k, parts);
        snprintf(shown, sizeof shown, "%s/%s", root, part);
        int fd = open_part(rfd, part, shown, err, len);
        if (fd < 0) {
            close_all(f);
            close(rfd);
            return -1;
        }
        f->fd[f->n++] = fd;
    }
    close(rfd);
    int lfd = link_folder(dir, m->name, err, len);
    if (lfd < 0) {
        close_all(f);
        return -1;
    }
    for (unsigned k = 0; k < f->n; k++) {
        char target[32], name[300];
        snprintf(target, sizeof target, "/proc/self/fd/%u", 3 + k);
        if (k == 0)
            snprintf(name, sizeof name, "%s", base);
        else
            snprintf(name, sizeof name, "%.*s-%05u-of-%05u.gguf", (int)(strlen(base) - 20), base,
                     k + 1, parts);
        if (symlinkat(target, lfd, name) < 0) {
            snprintf(err, len, "%s: cannot make a link to its file: %s", dir, strerror(errno));
            close(lfd);
            close_all(f);
            return -1;
        }
    }
    close(lfd);
    char file[MODELNAME_MAX * 3];
    if (modelname_file(m->name, file, sizeof file) < 0)
        snprintf(file, sizeof file, "model");
    snprintf(f->path, sizeof f->path, "%s/%s/%s", dir, file, base);
    return 0;
}
