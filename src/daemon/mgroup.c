/* mgroup: the group files of a capped model.
 *
 * The creator a file records is the model's main process (the `sh -c` the
 * daemon forks, which execs the model's command), not the daemon: slices.c
 * takes a file as a live promise while its creator lives, and it is the
 * model, not the daemon, whose life that should be. The daemon may exit and
 * leave its models running for the next one to adopt; with the daemon as
 * creator their slices would read as void (and be cleaned once their
 * members were idle) while the model still ran. With the model's process,
 * the file is right whoever runs: live while the model is, stale (and
 * removed by the first cleaner that looks) once it is gone. The files are
 * made before the fork (the child's environment is built before it) under
 * the daemon's name, and handed to the child right after. */
#include "daemon/mgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/clock.h"
#include "ipc/slices.h"

/* The file at path, just made, given to uid: opened without following a
 * link, and only if it still is this user's file of a group's size. */
static int give(const char *path, uid_t uid, gid_t gid)
{
    if (uid == geteuid())
        return 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    int rc = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
                     fchown(fd, uid, gid) == 0
                 ? 0
                 : -1;
    if (fd >= 0)
        close(fd);
    return rc;
}

int mgroup_create(struct mgroup *g, uint64_t cap, const unsigned *gpu, const char *const *uuid,
                  unsigned n, uid_t uid, gid_t gid, char *err, size_t len)
{
    memset(g, 0, sizeof *g);
    g->uid = uid;
    if (n == 0 || n > MGROUP_MAX) {
        snprintf(err, len, "%u GPUs: group files are made for 1 to %d", n, MGROUP_MAX);
        return -1;
    }
    if (group_dir_check(err, len) < 0)
        return -1;
    if (n > 1 && strchr(group_dir(), ',')) {
        snprintf(err, len,
                 "%s holds a comma, which separates the group files of a model over several "
                 "GPUs; set VRAM_RUN_DIR to a folder without one",
                 group_dir());
        return -1;
    }
    size_t at = 0;
    for (unsigned k = 0; k < n; k++) {
        struct group m;
        if (group_create(g->path[k], sizeof g->path[k], cap, gpu[k], uuid[k], clock_wall_ms()) <
            0) {
            snprintf(err, len, "cannot create a group file in %s: %s", group_dir(),
                     strerror(errno));
            mgroup_discard(g);
            return -1;
        }
        g->n = k + 1;
        if (give(g->path[k], uid, gid) < 0) {
            snprintf(err, len, "cannot give the group file %s to uid %u: %s", g->path[k],
                     (unsigned)uid, strerror(errno));
            mgroup_discard(g);
            return -1;
        }
        if (group_open_owned(&m, g->path[k], uid) < 0) {
            snprintf(err, len, "cannot open the group file %s it made", g->path[k]);
            mgroup_discard(g);
            return -1;
        }
        group_set_state(&m, GROUP_ADMITTED);
        group_close(&m);
        at += (size_t)snprintf(g->list + at, sizeof g->list - at, "%s%s", k ? "," : "", g->path[k]);
    }
    return 0;
}

void mgroup_own(const struct mgroup *g, pid_t pid, uint64_t start)
{
    for (unsigned k = 0; k < g->n; k++) {
        struct group m;
        if (group_open_owned(&m, g->path[k], g->uid) < 0)
            continue;
        group_set_creator(&m, (int32_t)pid, start);
        group_close(&m);
    }
}

void mgroup_discard(struct mgroup *g)
{
    for (unsigned k = 0; k < g->n; k++)
        unlink(g->path[k]);
    g->n = 0;
}

struct match {
    int dfd;
    uid_t me;
    pid_t pid;
    uint64_t start;
    const char *from; /* mgroup_move's, or NULL: mgroup_remove */
    unsigned to_index;
    const char *to;
    bool suspended; /* mgroup_suspended's */
};

static bool its(const struct match *m, const struct slice *s)
{
    return s->v.owner == m->me && s->v.creator == (int32_t)m->pid && s->v.creator_start == m->start;
}

static int remove_if_its(const struct slice *s, void *arg)
{
    const struct match *m = arg;
    if (its(m, s))
        unlinkat(m->dfd, s->name, 0);
    return 0;
}

static int move_if_its(const struct slice *s, void *arg)
{
    const struct match *m = arg;
    char path[GROUP_PATH_MAX * 2];
    struct group g;
    if (!its(m, s) || strcmp(s->v.gpu_uuid, m->from) != 0)
        return 0;
    snprintf(path, sizeof path, "%s/%s", group_dir(), s->name);
    if (group_open_owned(&g, path, m->me) == 0) {
        group_set_gpu(&g, m->to_index, m->to);
        group_close(&g);
    }
    return 1; /* one file per GPU */
}

static int mark_if_its(const struct slice *s, void *arg)
{
    const struct match *m = arg;
    char path[GROUP_PATH_MAX * 2];
    struct group g;
    if (!its(m, s))
        return 0;
    snprintf(path, sizeof path, "%s/%s", group_dir(), s->name);
    if (group_open_owned(&g, path, m->me) == 0) {
        group_set_state(&g, m->suspended ? GROUP_SUSPENDED : GROUP_ADMITTED);
        group_close(&g);
    }
    return 0;
}

struct notes {
    const struct mgroup_use *u;
    size_t n;
};

static int note_if_its(const struct slice *s, void *arg)
{
    const struct notes *t = arg;
    for (size_t k = 0; k < t->n; k++) {
        const struct mgroup_use *u = &t->u[k];
        if (s->v.owner != u->uid || s->v.creator != (int32_t)u->pid ||
            s->v.creator_start != u->start || strcmp(s->v.gpu_uuid, u->uuid) != 0)
            continue;
        char path[GROUP_PATH_MAX * 2];
        struct group g;
        snprintf(path, sizeof path, "%s/%s", group_dir(), s->name);
        if (group_open_owned(&g, path, u->uid) == 0) {
            group_note_use(&g, (int32_t)u->pid, u->start, u->used);
            group_close(&g);
        }
        break;
    }
    return 0;
}

void mgroup_note(const struct mgroup_use *u, size_t n)
{
    struct notes t = {u, n};
    if (n)
        slices_each(false, note_if_its, &t);
}

void mgroup_suspended(pid_t pid, uint64_t start, uid_t uid, bool suspended)
{
    struct match m = {.dfd = -1, .me = uid, .pid = pid, .start = start, .suspended = suspended};
    if (pid > 0 && start)
        slices_each(false, mark_if_its, &m);
}

void mgroup_move(pid_t pid, uint64_t start, uid_t uid, const char *from_uuid, unsigned to_index,
                 const char *to_uuid)
{
    struct match m = {-1, uid, pid, start, from_uuid, to_index, to_uuid};
    if (pid > 0 && start)
        slices_each(false, move_if_its, &m);
}

void mgroup_remove(pid_t pid, uint64_t start, uid_t uid)
{
    if (pid <= 0 || start == 0)
        return;
    struct match m = {open(group_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC), uid, pid, start};
    if (m.dfd < 0)
        return;
    slices_each(false, remove_if_its, &m);
    close(m.dfd);
}

struct sweep {
    int dfd;
    const uid_t *uid;
    size_t n;
};

/* A file of a model's user (not this one's: slices_each cleans those)
 * whose model is gone: the promise is void, and no one else removes it. */
static int remove_if_dead(const struct slice *s, void *arg)
{
    const struct sweep *w = arg;
    if (s->v.creator_alive || s->v.nmembers || s->v.owner == geteuid())
        return 0;
    for (size_t k = 0; k < w->n; k++)
        if (s->v.owner == w->uid[k]) {
            unlinkat(w->dfd, s->name, 0);
            break;
        }
    return 0;
}

void mgroup_sweep(const uid_t *uid, size_t n)
{
    struct sweep w = {open(group_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC), uid, n};
    if (w.dfd < 0)
        return;
    slices_each(true, remove_if_dead, &w);
    close(w.dfd);
}
