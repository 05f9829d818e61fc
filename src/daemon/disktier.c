/* disktier: the spill folder and its files (daemon/disktier.h). Files are
 * made with O_EXCL and O_NOFOLLOW in a folder only the daemon's user may
 * write, so nobody can put a link where a model's bytes will go. */
#include "daemon/disktier.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/modelname.h"
#include "core/units.h"

#define SUFFIX     ".spill"
#define MIN_MARGIN (1ULL << 30)

struct file {
    char path[600];
    uint64_t bytes; /* what it holds, or is reserved for until its process says */
};

struct disktier {
    char dir[512];
    uint64_t budget, used;
    unsigned seq; /* names are never reused while the daemon runs */
    struct file f[DISKTIER_OWNERS];
};

/* Whether dir is this user's own, a folder no one else may write in. */
static int owned(const char *dir, char *err, size_t len)
{
    struct stat st;
    if (lstat(dir, &st) != 0) {
        snprintf(err, len, "spill = %s: %s: give spill = a folder on a local disk, or spill = no",
                 dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0022)) {
        snprintf(err, len,
                 "spill = %s: it must be a folder of this user's (uid %u) that nobody else may "
                 "write in (chmod go-w), since models' memory goes there",
                 dir, (unsigned)geteuid());
        return -1;
    }
    return 0;
}

int disktier_check(const char *dir, char *err, size_t len)
{
    if (access(dir, F_OK) != 0) {
        /* made at start: its parent must let this user make it */
        char parent[512];
        snprintf(parent, sizeof parent, "%s", dir);
        char *slash = strrchr(parent, '/');
        if (slash)
            slash[slash == parent] = '\0';
        else
            snprintf(parent, sizeof parent, ".");
        if (access(parent, W_OK | X_OK) != 0 && access(parent, F_OK) == 0) {
            snprintf(err, len, "spill = %s: cannot make it in %s (%s): give spill = a folder you "
                               "may write in, or spill = no",
                     dir, parent, strerror(errno));
            return -1;
        }
        return 0;
    }
    return owned(dir, err, len);
}

/* What the folder's filesystem can give, less the margin it keeps for
 * everything else. */
static uint64_t room(const char *dir)
{
    struct statvfs v;
    if (statvfs(dir, &v) != 0)
        return 0;
    uint64_t free_b = (uint64_t)v.f_bavail * v.f_frsize, size = (uint64_t)v.f_blocks * v.f_frsize;
    uint64_t margin = size / 20 > MIN_MARGIN ? size / 20 : MIN_MARGIN;
    return free_b > margin ? free_b - margin : 0;
}

/* A previous daemon's files: nobody reads them again. */
static void sweep(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    size_t sl = strlen(SUFFIX);
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > sl && !strcmp(e->d_name + n - sl, SUFFIX))
            unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

struct disktier *disktier_open(const char *dir, uint64_t budget, char *err, size_t len)
{
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, len, "spill = %s: cannot make it (%s): give spill = a folder you may write "
                           "in, or spill = no",
                 dir, strerror(errno));
        return NULL;
    }
    if (owned(dir, err, len) < 0)
        return NULL;
    struct disktier *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    snprintf(t->dir, sizeof t->dir, "%s", dir);
    sweep(dir);
    t->budget = budget ? budget : room(dir);
    return t;
}

void disktier_close(struct disktier *t)
{
    if (!t)
        return;
    for (unsigned i = 0; i < DISKTIER_OWNERS; i++)
        disktier_remove(t, i);
    free(t);
}

int disktier_make(struct disktier *t, unsigned owner, const char *name, uid_t uid, gid_t gid,
                  uint64_t want, uint64_t *max, char *err, size_t len)
{
    if (owner >= DISKTIER_OWNERS) {
        snprintf(err, len, "no such model");
        return -1;
    }
    disktier_remove(t, owner);
    uint64_t left = t->budget > t->used ? t->budget - t->used : 0;
    /* the filesystem may have filled since: what it has now bounds it too */
    uint64_t fs = room(t->dir);
    left = fs < left ? fs : left;
    if (!left) {
        char a[32], b[32];
        snprintf(err, len, "the spill folder %s is full (spill_budget %s, %s held by models)",
                 t->dir, units_fmt_size(t->budget, a, sizeof a),
                 units_fmt_size(t->used, b, sizeof b));
        return -1;
    }
    char file[MODELNAME_MAX * 3];
    if (modelname_file(name, file, sizeof file) < 0)
        snprintf(file, sizeof file, "model");
    struct file *f = &t->f[owner];
    char path[sizeof f->path];
    snprintf(path, sizeof path, "%s/%s.%u%s", t->dir, file, ++t->seq, SUFFIX);
    memcpy(f->path, path, sizeof path);
    int fd = open(f->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, len, "cannot make %s: %s", f->path, strerror(errno));
        f->path[0] = '\0';
        return -1;
    }
    if ((uid != (uid_t)-1 || gid != (gid_t)-1) && fchown(fd, uid, gid) != 0) {
        snprintf(err, len, "cannot give %s to uid %d: %s", f->path, (int)uid, strerror(errno));
        close(fd);
        unlink(f->path);
        f->path[0] = '\0';
        return -1;
    }
    *max = want < left ? want : left;
    f->bytes = *max;
    t->used += *max;
    return fd;
}

bool disktier_has(const struct disktier *t, unsigned owner)
{
    return t && owner < DISKTIER_OWNERS && t->f[owner].path[0];
}

/* What a file takes on disk, measured here: its model's word for it is
 * not taken (a model writes its file itself, and could say less). */
static uint64_t on_disk(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_blocks * 512 : 0;
}

uint64_t disktier_set(struct disktier *t, unsigned owner, uint64_t bytes)
{
    if (!t || owner >= DISKTIER_OWNERS || !t->f[owner].path[0])
        return 0;
    uint64_t real = on_disk(t->f[owner].path);
    if (!bytes && !real) {
        disktier_remove(t, owner);
        return 0;
    }
    bytes = real > bytes ? real : bytes;
    t->used = t->used - t->f[owner].bytes + bytes;
    t->f[owner].bytes = bytes;
    return bytes;
}

void disktier_remove(struct disktier *t, unsigned owner)
{
    if (!t || owner >= DISKTIER_OWNERS || !t->f[owner].path[0])
        return;
    unlink(t->f[owner].path);
    t->used -= t->f[owner].bytes;
    t->f[owner].bytes = 0;
    t->f[owner].path[0] = '\0';
}

uint64_t disktier_held(const struct disktier *t, unsigned owner)
{
    return t && owner < DISKTIER_OWNERS ? t->f[owner].bytes : 0;
}

uint64_t disktier_used(const struct disktier *t)
{
    return t ? t->used : 0;
}

uint64_t disktier_budget(const struct disktier *t)
{
    return t ? t->budget : 0;
}

const char *disktier_dir(const struct disktier *t)
{
    return t ? t->dir : "";
}
