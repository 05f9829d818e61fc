/* rootat: each path is resolved by host/beneath.c with no link followed,
 * down to the folder that holds its last component, and the change is made
 * there with the *at calls, so that a link swapped in between two steps
 * makes the step fail, never leads out of the root. */
#include "host/rootat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "host/beneath.h"
#include "host/rootfs.h"

int rootat_open_root(const char *root)
{
    return open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* The folder holding rel, opened beneath the root with no link followed;
 * *name is rel's last component. -1 with errno. */
int rootat_parent(int root, const char *rel, const char **name)
{
    const char *slash = strrchr(rel, '/');
    char sub[ROOTAT_MAX_REL + 1];
    snprintf(sub, sizeof sub, "%.*s", slash ? (int)(slash - rel) : 0, rel);
    *name = slash ? slash + 1 : rel;
    mode_t kind;
    return beneath_open(root, sub, BENEATH_DIR, &kind);
}

int rootat_lstat(int root, const char *rel, struct stat *st)
{
    const char *name;
    int dir = rootat_parent(root, rel, &name);
    if (dir < 0)
        return -1;
    int rc = fstatat(dir, name, st, AT_SYMLINK_NOFOLLOW);
    int e = errno;
    close(dir);
    errno = e;
    return rc;
}

bool rootat_exists(int root, const char *rel)
{
    struct stat st;
    return rootat_lstat(root, rel, &st) == 0;
}

/* Why rel cannot be reached, for a message. */
void rootat_why(const char *root, const char *rel, int e, const char *what, char *err, size_t len)
{
    char p[1024];
    rootfs_path(root, rel, p, sizeof p);
    if (e == ELOOP)
        snprintf(err, len,
                 "cannot %s %s: a symbolic link on the way, and vram follows none under the "
                 "root it changes (one could lead out of it): put the directory itself there",
                 what, p);
    else
        snprintf(err, len, "cannot %s %s: %s", what, p, strerror(e));
}

/* Only root, or the user this runs as, may have made it, and no one else
 * may change it. */
bool rootat_trusted(const struct stat *st)
{
    return (st->st_uid == 0 || st->st_uid == geteuid()) && !(st->st_mode & 022);
}

void rootat_untrusted(const char *root, const char *rel, const struct stat *st, char *err,
                      size_t len)
{
    char p[1024];
    rootfs_path(root, rel, p, sizeof p);
    if (st->st_uid != 0 && st->st_uid != geteuid())
        snprintf(err, len,
                 "%s belongs to uid %u, not to root%s: vram does not trust a record another "
                 "user could have written; check it, then chown it to root, or remove it",
                 p, (unsigned)st->st_uid, geteuid() ? " or this user" : "");
    else
        snprintf(err, len,
                 "%s may be changed by others (mode %04o): vram does not trust such a "
                 "record; check it, then chmod go-w it",
                 p, (unsigned)(st->st_mode & 07777));
}

/* The SHA-256 of what is at name in dir: a regular file's bytes, or a
 * link's target (a link is moved, never followed). -1 with errno (EINVAL:
 * something else, its type in *kind; EFBIG: too large to be a
 * configuration file). */
int rootat_hash_at(int dir, const char *name, char out[ROOTAT_HASH_LEN + 1], mode_t *kind)
{
    struct stat st;
    SHA2_CTX c;
    SHA256Init(&c);
    *kind = 0;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return -1;
    if (S_ISLNK(st.st_mode)) {
        char target[4096];
        ssize_t n = readlinkat(dir, name, target, sizeof target);
        if (n < 0)
            return -1;
        SHA256Update(&c, (const uint8_t *)"symlink:", 8);
        SHA256Update(&c, (const uint8_t *)target, (size_t)n);
        SHA256End(&c, out);
        return 0;
    }
    if (!S_ISREG(st.st_mode)) {
        *kind = st.st_mode & S_IFMT;
        return errno = EINVAL, -1;
    }
    if (st.st_size > ROOTAT_MAX_HASHED)
        return errno = EFBIG, -1;
    int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        *kind = st.st_mode & S_IFMT;
        close(fd);
        return errno = EINVAL, -1;
    }
    char buf[16384];
    ssize_t n;
    size_t total = 0;
    while ((n = read(fd, buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || (total += (size_t)n) > ROOTAT_MAX_HASHED) {
            int e = n < 0 ? errno : EFBIG;
            close(fd);
            return errno = e, -1;
        }
        SHA256Update(&c, (const uint8_t *)buf, (size_t)n);
    }
    close(fd);
    SHA256End(&c, out);
    return 0;
}

int rootat_hash(int root, const char *rel, char out[ROOTAT_HASH_LEN + 1], mode_t *kind)
{
    const char *name;
    int dir = rootat_parent(root, rel, &name);
    if (dir < 0)
        return -1;
    int rc = rootat_hash_at(dir, name, out, kind);
    int e = errno;
    close(dir);
    errno = e;
    return rc;
}

void rootat_hash_text(const char *content, char out[ROOTAT_HASH_LEN + 1])
{
    SHA256Data((const uint8_t *)content, strlen(content), out);
}

/* content at rel: a new file beside it, then renamed over it, so that a
 * reader never sees half of it; never opened through a link. */
int rootat_write(int root, const char *rel, const char *content)
{
    const char *name;
    int dir = rootat_parent(root, rel, &name);
    if (dir < 0)
        return -1;
    char tmp[ROOTAT_MAX_REL + 16];
    snprintf(tmp, sizeof tmp, "%s.vram-new", name);
    unlinkat(dir, tmp, 0); /* one a failed run left */
    int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    bool ok = fd >= 0;
    if (ok) {
        size_t n = strlen(content);
        ok = write(fd, content, n) == (ssize_t)n && fchmod(fd, 0644) == 0 && fsync(fd) == 0;
        ok = (close(fd) == 0) && ok;
    }
    if (!ok || renameat(dir, tmp, dir, name) < 0) {
        int e = errno;
        unlinkat(dir, tmp, 0);
        close(dir);
        errno = e;
        return -1;
    }
    close(dir);
    return 0;
}

/* Moves from to to, both beneath the root. */
int rootat_move(int root, const char *from, const char *to)
{
    const char *fn, *tn;
    int fd = rootat_parent(root, from, &fn);
    int td = fd >= 0 ? rootat_parent(root, to, &tn) : -1;
    int rc = td >= 0 ? renameat(fd, fn, td, tn) : -1;
    int e = errno;
    if (fd >= 0)
        close(fd);
    if (td >= 0)
        close(td);
    errno = e;
    return rc;
}
