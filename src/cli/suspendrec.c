/* suspendrec: the records of suspended processes.
 *
 * The folder is vram-suspended-UID in the run directory, made by UID
 * (0755: the records are no secret, and root's are read by the user whose
 * process root suspended) and written by no one else. Another user may
 * have made that name first, as a folder or anything else: then the
 * folder is vram-suspended-UID.XXXXXX, a name no one can guess (mkdtemp),
 * and a reader looks at every vram-suspended-UID* that UID owns. Every
 * folder and record is looked at before it is believed: a directory (or
 * a regular file) owned by its user, writable by no one else. */
#include "cli/suspendrec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipc/group.h"

#define PREFIX "vram-suspended-"

static bool trusted(const struct stat *st, uid_t uid, mode_t type)
{
    return (st->st_mode & S_IFMT) == type && st->st_uid == uid && !(st->st_mode & 022);
}

/* The folder of uid's records in dirfd (the run directory), opened: the
 * first of its names that is one. -1 when none is. */
static int open_folder(int rundir, uid_t uid)
{
    char want[64];
    size_t wn = (size_t)snprintf(want, sizeof want, PREFIX "%u", (unsigned)uid);
    int fd = openat(rundir, want, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && trusted(&st, uid, S_IFDIR))
        return fd;
    if (fd >= 0)
        close(fd);
    int dup_fd = dup(rundir);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0)
            close(dup_fd);
        return -1;
    }
    rewinddir(d); /* the duplicate shares its offset with rundir, read before */
    struct dirent *e;
    fd = -1;
    while (fd < 0 && (e = readdir(d))) {
        if (strncmp(e->d_name, want, wn) || e->d_name[wn] != '.')
            continue;
        if (fstatat(rundir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !trusted(&st, uid, S_IFDIR))
            continue;
        fd = openat(rundir, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0 && (fstat(fd, &st) < 0 || !trusted(&st, uid, S_IFDIR))) {
            close(fd);
            fd = -1;
        }
    }
    closedir(d);
    return fd;
}

/* This user's folder, made if it is missing. */
static int own_folder(int rundir, char *err, size_t len)
{
    uid_t me = geteuid();
    int fd = open_folder(rundir, me);
    if (fd >= 0)
        return fd;
    char name[64];
    snprintf(name, sizeof name, PREFIX "%u", (unsigned)me);
    if (mkdirat(rundir, name, 0755) == 0 || errno != EEXIST) {
        fd = open_folder(rundir, me);
        if (fd >= 0) {
            fchmod(fd, 0755); /* whatever the umask: root's are read by the users */
            return fd;
        }
    }
    /* the name is taken (by another user, or not a folder): one of our own */
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s/" PREFIX "%u.XXXXXX", group_dir(), (unsigned)me);
    if (!mkdtemp(tmp)) {
        snprintf(err, len, "cannot make a folder for the record in %s: %s", group_dir(),
                 strerror(errno));
        return -1;
    }
    fd = open_folder(rundir, me);
    if (fd >= 0)
        fchmod(fd, 0755);
    if (fd < 0)
        snprintf(err, len, "cannot open the folder %s it made", tmp);
    return fd;
}

static int open_rundir(void)
{
    return open(group_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int suspendrec_write(int pid, const struct suspendrec *r, char *err, size_t len)
{
    int rundir = open_rundir();
    if (rundir < 0) {
        snprintf(err, len, "cannot open %s: %s", group_dir(), strerror(errno));
        return -1;
    }
    int dir = own_folder(rundir, err, len);
    close(rundir);
    if (dir < 0)
        return -1;
    char name[32];
    snprintf(name, sizeof name, "%d", pid);
    unlinkat(dir, name, 0); /* ours, from a process that had this pid before */
    int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    int e = errno;
    close(dir);
    if (!f) {
        if (fd >= 0)
            close(fd);
        snprintf(err, len, "cannot write the record of pid %d in %s: %s", pid, group_dir(),
                 strerror(e));
        return -1;
    }
    fprintf(f, "%llu %s %llu\n", r->start, r->uuid, r->bytes);
    return fclose(f) == 0 ? 0 : -1;
}

/* The record of pid in uid's folder. */
static int read_of(int rundir, uid_t uid, int pid, struct suspendrec *r)
{
    int dir = open_folder(rundir, uid);
    if (dir < 0)
        return -1;
    char name[32];
    snprintf(name, sizeof name, "%d", pid);
    int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    close(dir);
    struct stat st;
    if (fd < 0)
        return -1;
    FILE *f = NULL;
    if (fstat(fd, &st) < 0 || !trusted(&st, uid, S_IFREG) || !(f = fdopen(fd, "r"))) {
        close(fd);
        return -1;
    }
    int n = fscanf(f, "%llu %95s %llu", &r->start, r->uuid, &r->bytes);
    fclose(f);
    return n == 3 ? 0 : -1;
}

int suspendrec_read(int pid, struct suspendrec *r)
{
    int rundir = open_rundir();
    if (rundir < 0)
        return -1;
    int rc = read_of(rundir, geteuid(), pid, r);
    if (rc < 0 && geteuid() != 0) /* root suspended it */
        rc = read_of(rundir, 0, pid, r);
    close(rundir);
    return rc;
}

/* uid's records, appended after n of max. */
static size_t list_of(int rundir, uid_t uid, int *pids, struct suspendrec *recs, size_t n,
                      size_t max)
{
    int dir = open_folder(rundir, uid);
    DIR *d = dir >= 0 ? fdopendir(dir) : NULL;
    if (!d) {
        if (dir >= 0)
            close(dir);
        return n;
    }
    struct dirent *e;
    while (n < max && (e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (e->d_name[0] < '1' || e->d_name[0] > '9' || *end || pid > INT_MAX)
            continue;
        bool dup = false; /* root's record of a pid this user has one of too */
        for (size_t k = 0; k < n; k++)
            dup |= pids[k] == (int)pid;
        if (!dup && read_of(rundir, uid, (int)pid, &recs[n]) == 0)
            pids[n++] = (int)pid;
    }
    closedir(d);
    return n;
}

size_t suspendrec_list(int *pids, struct suspendrec *recs, size_t max)
{
    int rundir = open_rundir();
    if (rundir < 0)
        return 0;
    size_t n = list_of(rundir, geteuid(), pids, recs, 0, max);
    if (geteuid() != 0)
        n = list_of(rundir, 0, pids, recs, n, max);
    close(rundir);
    return n;
}

void suspendrec_remove(int pid)
{
    int rundir = open_rundir();
    if (rundir < 0)
        return;
    int dir = open_folder(rundir, geteuid());
    close(rundir);
    if (dir < 0)
        return;
    char name[32];
    snprintf(name, sizeof name, "%d", pid);
    unlinkat(dir, name, 0);
    close(dir);
}
