/* slices: every user's slices, from their group files.
 *
 * The folder is shared by every user (/dev/shm), so anything in it may be
 * anyone's doing. A file is read only after fstatat says it is a regular
 * file (no FIFO to block the open, no device, no link), of a group file's
 * size, writable by no one but its owner; the copy itself never locks
 * (ipc/group.c). What it says counts as its owner's word only: the members
 * it lists count only while they are live processes of that user, and its
 * promise only while the `vram run` that made it lives as that user's
 * process. So a file can speak for no one but the user who owns it. */
#include "ipc/slices.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct user_count {
    uint32_t uid;
    unsigned n;
};

/* How many of this user's files were read already (a small open table). */
static unsigned *count_of(struct user_count *t, size_t len, uint32_t uid)
{
    size_t h = (uid * 2654435761u) % len;
    for (size_t i = 0; i < len; i++) {
        struct user_count *c = &t[(h + i) % len];
        if (c->n == 0 || c->uid == uid) {
            c->uid = uid;
            return &c->n;
        }
    }
    return NULL; /* more users than the table: read without a count */
}

int slices_each(bool clean, int (*fn)(const struct slice *s, void *arg), void *arg)
{
    int dfd = open(group_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    int lfd = dup(dfd);
    DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
    if (!d) {
        if (lfd >= 0)
            close(lfd);
        close(dfd);
        return -1;
    }
    struct slice *s = malloc(sizeof *s);
    struct user_count seen[1024];
    memset(seen, 0, sizeof seen);
    uint32_t me = (uint32_t)geteuid();
    int rc = s ? 0 : -1;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (strncmp(e->d_name, GROUP_PREFIX, strlen(GROUP_PREFIX)) != 0)
            continue;
        struct stat st;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
            continue;
        unsigned *n = count_of(seen, sizeof seen / sizeof seen[0], (uint32_t)st.st_uid);
        if (n && ++*n > SLICES_PER_USER)
            continue;
        if (group_read_at(dfd, e->d_name, &s->v) < 0)
            continue;
        if (clean && !s->v.creator_alive && s->v.nmembers == 0 && s->v.unseen == 0 &&
            s->v.owner == me) {
            /* a `vram run` that died: its promise is void */
            unlinkat(dfd, e->d_name, 0);
            continue;
        }
        snprintf(s->name, sizeof s->name, "%s", e->d_name);
        rc = fn(s, arg);
    }
    free(s);
    closedir(d);
    close(dfd);
    return rc;
}

bool slices_promises(const struct slice *s, unsigned gpu, const char *uuid, uint64_t total)
{
    const struct group_view *v = &s->v;
    return v->creator_alive && v->state != GROUP_SUSPENDED && v->cap != UINT64_MAX &&
           v->gpu_index == gpu &&
           strcmp(v->gpu_uuid, uuid) == 0 && v->cap <= total;
}

uint64_t slices_unused(const struct slice *s)
{
    return s->v.cap > s->v.used ? s->v.cap - s->v.used : 0;
}
