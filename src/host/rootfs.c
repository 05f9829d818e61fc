/* rootfs: changes to a root that `vram headless off` can take back.
 *
 * The record (ROOTFS_STATE/manifest) is written before each change, so a
 * crash leaves at most a step recorded but not done; every undo step checks
 * what is there before acting, which makes reverting a half-applied plan,
 * or reverting twice, safe. Replaced files are moved, not copied, into
 * ROOTFS_STATE/backup: their bytes, mode, owner and times come back as they
 * were.
 *
 * The root may be a tree another user can write (`--root DIR`), and this
 * runs as root: every path is resolved beneath the root with no link
 * followed (host/beneath.c), and every change is made relative to a folder
 * held open, so no link, planted before or swapped in during, leads a write
 * out of the tree. The record is believed only if root (or, for a user, that
 * user) owns it and its folder and no one else may write them; it carries
 * the SHA-256 of what `on` moved aside and of what it wrote, and `off`
 * checks both before it moves anything: a backup swapped or a file changed
 * since is named, and nothing is done. */
#include "host/rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/beneath.h"
#include "host/rootat.h"

#define MANIFEST   ROOTFS_STATE "/manifest"
#define BACKUPS    ROOTFS_STATE "/backup"
#define MAGIC_V1   "vram-headless 1" /* before hashes: still read, unchecked */
#define MAGIC      "vram-headless 2"
#define MAX_OPS    64

enum op_kind { OP_MKDIR, OP_WRITE, OP_REPLACE, OP_ASIDE };
static const char *const op_names[] = {"mkdir", "write", "replace", "aside"};
/* how many hashes each kind carries: what was there before, what vram wrote */
static const int op_hashes[] = {0, 1, 2, 1};

struct op {
    enum op_kind kind;
    char path[ROOTAT_MAX_REL + 1];
    char backup[ROOTAT_MAX_REL + 1];
    char old[ROOTAT_HASH_LEN + 1]; /* replace, aside: the original's; "" in a v1 record */
    char new[ROOTAT_HASH_LEN + 1]; /* write, replace: what vram wrote; "" in a v1 record */
};

void rootfs_path(const char *root, const char *rel, char *out, size_t len)
{
    size_t rl = strlen(root);
    while (rl > 1 && root[rl - 1] == '/')
        rl--;
    if (!*rel)
        snprintf(out, len, "%.*s", (int)rl, root);
    else
        snprintf(out, len, "%.*s/%s", (int)(rl == 1 && root[0] == '/' ? 0 : rl), root, rel);
}

/* A relative path of plain names: no "..", no "//", no leading '/'. */
static bool safe_rel(const char *rel)
{
    size_t n = strlen(rel);
    if (n == 0 || n > ROOTAT_MAX_REL || rel[0] == '/' || rel[n - 1] == '/' || strstr(rel, "//"))
        return false;
    for (const char *c = rel; *c; c++)
        if ((unsigned char)*c <= ' ' || *c == 127)
            return false;
    for (const char *s = rel; s; s = strchr(s, '/') ? strchr(s, '/') + 1 : NULL)
        if ((!strncmp(s, "..", 2) && (s[2] == '/' || s[2] == '\0')) ||
            (s[0] == '.' && (s[1] == '/' || s[1] == '\0')))
            return false;
    return true;
}

static bool is_hash(const char *h)
{
    if (strlen(h) != ROOTAT_HASH_LEN)
        return false;
    for (; *h; h++)
        if (!((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f')))
            return false;
    return true;
}

/* ---- the record ---- */

/* Parses a record's text into ops: 1 when valid, -1 with err naming the
 * first bad line (where is the file's name, for the message). */
static int parse_record(const char *text, size_t len, const char *where, struct op *ops,
                        size_t *nops, int64_t *since, char *err, size_t errlen)
{
    char line[600];
    long long t = 0;
    bool v1 = false;
    *nops = 0;
    size_t at = 0;
    for (unsigned no = 1; at < len; no++) {
        size_t end = at;
        while (end < len && text[end] != '\n')
            end++;
        if (end - at >= sizeof line || memchr(text + at, '\0', end - at)) {
            snprintf(err, errlen, "%s: line %u is damaged: nothing was changed", where, no);
            return -1;
        }
        memcpy(line, text + at, end - at);
        line[end - at] = '\0';
        at = end + 1;
        if (no == 1) {
            if (sscanf(line, MAGIC " %lld", &t) != 1 &&
                !(v1 = sscanf(line, MAGIC_V1 " %lld", &t) == 1)) {
                snprintf(err, errlen, "%s: line 1 is not a vram record", where);
                return -1;
            }
            continue;
        }
        /* KIND PATH [BACKUP] [HASH...]: words split in place */
        char shown[64];
        snprintf(shown, sizeof shown, "%.60s", line);
        char *w[6] = {NULL};
        int nw = 0;
        for (char *c = line; nw < 6;) {
            while (*c == ' ')
                c++;
            if (!*c)
                break;
            w[nw++] = c;
            c += strcspn(c, " ");
            if (*c)
                *c++ = '\0';
        }
        int k = -1;
        for (int i = 0; nw >= 2 && i < 4; i++)
            if (!strcmp(w[0], op_names[i]))
                k = i;
        bool two = k == OP_REPLACE || k == OP_ASIDE;
        int nh = k < 0 || v1 ? 0 : op_hashes[k];
        const char *a = w[1], *b = two ? w[2] : NULL;
        const char *h1 = nh > 0 ? w[2 + two] : NULL, *h2 = nh > 1 ? w[3 + two] : NULL;
        if (k < 0 || *nops == MAX_OPS || nw != 2 + two + nh || !safe_rel(a) ||
            (h1 && !is_hash(h1)) || (h2 && !is_hash(h2)) ||
            (two && (!safe_rel(b) || strncmp(b, BACKUPS "/", sizeof BACKUPS)))) {
            snprintf(err, errlen, "%s: line %u is damaged (\"%.60s\"): nothing was changed", where,
                     no, shown);
            return -1;
        }
        struct op *o = &ops[(*nops)++];
        memset(o, 0, sizeof *o);
        o->kind = (enum op_kind)k;
        snprintf(o->path, sizeof o->path, "%s", a);
        snprintf(o->backup, sizeof o->backup, "%s", b ? b : "");
        if (h1 && k == OP_WRITE)
            snprintf(o->new, sizeof o->new, "%s", h1);
        if (h1 && two)
            snprintf(o->old, sizeof o->old, "%s", h1);
        if (h2)
            snprintf(o->new, sizeof o->new, "%s", h2);
    }
    if (len == 0) {
        snprintf(err, errlen, "%s: empty", where);
        return -1;
    }
    if (since)
        *since = t;
    return 1;
}

int rootfs_parse(const char *text, size_t len, char *err, size_t errlen)
{
    struct op *ops = calloc(MAX_OPS, sizeof *ops);
    size_t n;
    if (!ops)
        return -1;
    int rc = parse_record(text, len, "record", ops, &n, NULL, err, errlen);
    free(ops);
    return rc < 0 ? -1 : (int)n;
}

#define RECORD_MAX (64 * 1024)

static int read_record(const char *root, struct op *ops, size_t *nops, int64_t *since, char *err,
                       size_t len)
{
    char path[1024];
    rootfs_path(root, MANIFEST, path, sizeof path);
    *nops = 0;
    int r = rootat_open_root(root);
    if (r < 0) {
        snprintf(err, len, "%s: %s", root, strerror(errno));
        return -1;
    }
    mode_t kind;
    int dir = beneath_open(r, ROOTFS_STATE, BENEATH_DIR, &kind), fd = -1;
    struct stat st;
    int rc = -1;
    char *text = NULL;
    if (dir < 0 && errno == ENOENT)
        rc = 0;
    else if (dir < 0)
        rootat_why(root, ROOTFS_STATE, errno, "read", err, len);
    else if (fstat(dir, &st) < 0 || !rootat_trusted(&st))
        rootat_untrusted(root, ROOTFS_STATE, &st, err, len);
    else if ((fd = openat(dir, "manifest", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0) {
        if (errno == ENOENT)
            rc = 0;
        else
            rootat_why(root, MANIFEST, errno, "read", err, len);
    } else if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        snprintf(err, len, "%s: not a regular file: not a vram record", path);
    else if (!rootat_trusted(&st))
        rootat_untrusted(root, MANIFEST, &st, err, len);
    else if (!(text = malloc(RECORD_MAX + 1)))
        snprintf(err, len, "out of memory");
    else {
        size_t n = 0;
        ssize_t got;
        while (n <= RECORD_MAX && (got = read(fd, text + n, RECORD_MAX + 1 - n)) > 0)
            n += (size_t)got;
        if (n > RECORD_MAX)
            snprintf(err, len, "%s: too large to be a vram record", path);
        else
            rc = parse_record(text, n, path, ops, nops, since, err, len);
    }
    free(text);
    if (fd >= 0)
        close(fd);
    if (dir >= 0)
        close(dir);
    close(r);
    return rc;
}

int rootfs_applied(const char *root, int64_t *since, char *err, size_t len)
{
    struct op *ops = calloc(MAX_OPS, sizeof *ops);
    size_t n;
    if (!ops) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    int rc = read_record(root, ops, &n, since, err, len);
    free(ops);
    return rc;
}

struct journal {
    FILE *f;
    const char *root;
    int rfd; /* the root, held open */
    unsigned nbackup;
};

static int note(struct journal *j, enum op_kind k, const char *path, const char *backup,
                const char *h1, const char *h2)
{
    fprintf(j->f, "%s %s", op_names[k], path);
    const char *words[] = {backup, h1, h2};
    for (int i = 0; i < 3; i++)
        if (words[i])
            fprintf(j->f, " %s", words[i]);
    fputc('\n', j->f);
    if (fflush(j->f) || fsync(fileno(j->f)))
        return -1;
    return 0;
}

/* ---- applying ---- */

/* Creates the missing directories of rel's parent, noting each. */
static int make_parents(struct journal *j, const char *rel, char *err, size_t len)
{
    char sub[ROOTAT_MAX_REL + 1];
    for (const char *s = strchr(rel, '/'); s; s = strchr(s + 1, '/')) {
        snprintf(sub, sizeof sub, "%.*s", (int)(s - rel), rel);
        if (rootat_exists(j->rfd, sub))
            continue;
        if (j->f && note(j, OP_MKDIR, sub, NULL, NULL, NULL) < 0) {
            snprintf(err, len, "cannot write the record: %s", strerror(errno));
            return -1;
        }
        const char *name;
        int dir = rootat_parent(j->rfd, sub, &name);
        if (dir < 0 || mkdirat(dir, name, 0755) < 0) {
            rootat_why(j->root, sub, errno, "create", err, len);
            if (dir >= 0)
                close(dir);
            return -1;
        }
        close(dir);
    }
    return 0;
}

/* Moves rel into the backups, noting it (and its hash) first. */
static int keep(struct journal *j, enum op_kind k, const char *rel, const char *new_hash, char *err,
                size_t len)
{
    char backup[64], old[ROOTAT_HASH_LEN + 1];
    mode_t kind;
    snprintf(backup, sizeof backup, BACKUPS "/%u", ++j->nbackup);
    if (rootat_hash(j->rfd, rel, old, &kind) < 0) {
        rootat_why(j->root, rel, errno, "read", err, len);
        return -1;
    }
    if (note(j, k, rel, backup, old, new_hash) < 0 || rootat_move(j->rfd, rel, backup) < 0) {
        rootat_why(j->root, rel, errno, "move aside", err, len);
        return -1;
    }
    return 0;
}

static int apply_step(struct journal *j, const struct hl_step *s, char *err, size_t len)
{
    char h[ROOTAT_HASH_LEN + 1];
    if (s->op == HL_ASIDE)
        return rootat_exists(j->rfd, s->path) ? keep(j, OP_ASIDE, s->path, NULL, err, len) : 0;
    rootat_hash_text(s->content, h);
    if (make_parents(j, s->path, err, len) < 0)
        return -1;
    if (rootat_exists(j->rfd, s->path)) {
        if (keep(j, OP_REPLACE, s->path, h, err, len) < 0)
            return -1;
    } else if (note(j, OP_WRITE, s->path, NULL, h, NULL) < 0) {
        snprintf(err, len, "cannot write the record: %s", strerror(errno));
        return -1;
    }
    if (rootat_write(j->rfd, s->path, s->content) < 0) {
        rootat_why(j->root, s->path, errno, "write", err, len);
        return -1;
    }
    return 0;
}

/* The nearest existing directory above rel must be writable, and reached
 * with no link on the way. */
static int check_dir(const char *root, int rfd, const char *rel, char *err, size_t len)
{
    char sub[ROOTAT_MAX_REL + 1], p[1024];
    snprintf(sub, sizeof sub, "%s", rel);
    for (;;) {
        char *slash = strrchr(sub, '/');
        if (slash)
            *slash = '\0';
        else
            sub[0] = '\0';
        rootfs_path(root, sub, p, sizeof p);
        struct stat st;
        if (!sub[0] || rootat_lstat(rfd, sub, &st) == 0) {
            mode_t kind;
            int d = beneath_open(rfd, sub, BENEATH_DIR, &kind);
            if (d < 0 && (errno == ENOTDIR || (errno == EINVAL && kind))) {
                snprintf(err, len, "%s is not a directory", p);
                return -1;
            }
            if (d < 0) {
                rootat_why(root, sub, errno, "reach", err, len);
                return -1;
            }
            int ok = faccessat(d, ".", W_OK, 0);
            int e = errno;
            close(d);
            if (ok < 0) {
                snprintf(err, len, "cannot write in %s (%s)", p, strerror(e));
                return -1;
            }
            return 0;
        }
        if (errno != ENOENT && errno != ENOTDIR) { /* ENOTDIR: found further up */
            rootat_why(root, sub, errno, "reach", err, len);
            return -1;
        }
    }
}

/* What is at rel may be moved aside and kept: a file or a link, not too
 * large to be checked on the way back. */
static int check_movable(const char *root, int rfd, const char *rel, char *err, size_t len)
{
    char p[1024], h[ROOTAT_HASH_LEN + 1];
    mode_t kind;
    rootfs_path(root, rel, p, sizeof p);
    if (!rootat_exists(rfd, rel) || rootat_hash(rfd, rel, h, &kind) == 0)
        return 0;
    if (errno == EINVAL && kind == S_IFDIR)
        snprintf(err, len, "%s is a directory: move it away first", p);
    else if (errno == EINVAL)
        snprintf(err, len,
                 "%s is not a regular file (a FIFO, a device...): move it away first", p);
    else if (errno == EFBIG)
        snprintf(err, len,
                 "%s is larger than %d MiB, no configuration file: move it away first", p,
                 ROOTAT_MAX_HASHED >> 20);
    else
        rootat_why(root, rel, errno, "read", err, len);
    return -1;
}

static int check_plan(const char *root, int rfd, const struct hl_plan *p, char *err, size_t len)
{
    if (check_dir(root, rfd, MANIFEST, err, len) < 0)
        return -1;
    /* where the originals will be kept: vram's own, if there already */
    static const char *const own[] = {ROOTFS_STATE, BACKUPS};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        struct stat st;
        char d[1024];
        rootfs_path(root, own[i], d, sizeof d);
        if (rootat_lstat(rfd, own[i], &st) < 0)
            continue;
        if (!S_ISDIR(st.st_mode)) {
            snprintf(err, len, "%s is not a directory: move it away first", d);
            return -1;
        }
        if (!rootat_trusted(&st)) {
            rootat_untrusted(root, own[i], &st, err, len);
            return -1;
        }
    }
    for (size_t i = 0; i < p->nsteps; i++) {
        if (!safe_rel(p->steps[i].path)) {
            snprintf(err, len, "bad path in the plan: %s", p->steps[i].path);
            return -1;
        }
        if (check_dir(root, rfd, p->steps[i].path, err, len) < 0 ||
            check_movable(root, rfd, p->steps[i].path, err, len) < 0)
            return -1;
    }
    return 0;
}

int rootfs_check(const char *root, const struct hl_plan *p, char *err, size_t len)
{
    int rfd = rootat_open_root(root);
    if (rfd < 0) {
        snprintf(err, len, "%s: %s", root, strerror(errno));
        return -1;
    }
    int rc = check_plan(root, rfd, p, err, len);
    close(rfd);
    return rc;
}

int rootfs_apply(const char *root, const struct hl_plan *p, int64_t now, char *err, size_t len)
{
    int rfd = rootat_open_root(root);
    if (rfd < 0) {
        snprintf(err, len, "%s: %s", root, strerror(errno));
        return -1;
    }
    if (check_plan(root, rfd, p, err, len) < 0) {
        close(rfd);
        return -1;
    }
    struct journal j = {NULL, root, rfd, 0};
    err[0] = '\0';
    /* the record's own directories are created first, then noted in it */
    char created[8][ROOTAT_MAX_REL + 1];
    size_t ncreated = 0;
    const char *dirs = BACKUPS "/";
    for (const char *s = strchr(dirs, '/'); s && ncreated < 8; s = strchr(s + 1, '/')) {
        char sub[ROOTAT_MAX_REL + 1];
        snprintf(sub, sizeof sub, "%.*s", (int)(s - dirs), dirs);
        if (rootat_exists(rfd, sub))
            continue;
        const char *name;
        int d = rootat_parent(rfd, sub, &name);
        if (d < 0 || mkdirat(d, name, 0755) < 0) {
            rootat_why(root, sub, errno, "create", err, len);
            if (d >= 0)
                close(d);
            break;
        }
        close(d);
        snprintf(created[ncreated++], ROOTAT_MAX_REL + 1, "%s", sub);
    }
    const char *mname;
    int md = err[0] ? -1 : rootat_parent(rfd, MANIFEST, &mname);
    int mfd = md >= 0
                  ? openat(md, mname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)
                  : -1;
    if (mfd < 0 && !err[0])
        rootat_why(root, MANIFEST, errno, "create", err, len);
    if (mfd >= 0 && fchmod(mfd, 0644) == 0)
        j.f = fdopen(mfd, "w");
    else if (mfd >= 0)
        close(mfd);
    if (md >= 0)
        close(md);
    if (!j.f) {
        if (!err[0])
            rootat_why(root, MANIFEST, errno, "create", err, len);
        for (size_t i = ncreated; i-- > 0;) {
            const char *name;
            int d = rootat_parent(rfd, created[i], &name);
            if (d >= 0) {
                unlinkat(d, name, AT_REMOVEDIR);
                close(d);
            }
        }
        close(rfd);
        return -1;
    }
    fprintf(j.f, MAGIC " %lld\n", (long long)now);
    int rc = 0;
    for (size_t i = 0; i < ncreated && rc == 0; i++)
        rc = note(&j, OP_MKDIR, created[i], NULL, NULL, NULL);
    if (rc < 0)
        rootat_why(root, MANIFEST, errno, "write", err, len);
    for (size_t i = 0; i < p->nsteps && rc == 0; i++)
        rc = apply_step(&j, &p->steps[i], err, len);
    fclose(j.f);
    close(rfd);
    if (rc < 0) {
        char e2[256];
        if (rootfs_revert(root, e2, sizeof e2) < 0 && strlen(err) + 40 < len)
            snprintf(err + strlen(err), len - strlen(err), "; undoing failed too: %s", e2);
    }
    return rc;
}

/* ---- reverting ---- */

/* Whether undoing o would put back what `on` recorded and take away only
 * what it wrote; 0, or -1 with err naming what changed and what to do. */
static int verify(const char *root, int rfd, const struct op *o, char *err, size_t len)
{
    char h[ROOTAT_HASH_LEN + 1], p[1024], b[1024];
    mode_t kind;
    rootfs_path(root, o->path, p, sizeof p);
    rootfs_path(root, o->backup, b, sizeof b);
    if (o->kind == OP_MKDIR)
        return 0;
    if (o->new[0] && rootat_exists(rfd, o->path) &&
        (rootat_hash(rfd, o->path, h, &kind) < 0 || strcmp(h, o->new))) {
        snprintf(err, len,
                 "%s changed since `vram headless on` wrote it: vram removes only what it "
                 "wrote; move it away (keep it if it is yours), then run off again",
                 p);
        return -1;
    }
    if ((o->kind == OP_REPLACE || o->kind == OP_ASIDE) && rootat_exists(rfd, o->backup)) {
        struct stat st;
        const char *name;
        int d = rootat_parent(rfd, o->backup, &name);
        bool ok = d >= 0 && fstat(d, &st) == 0 && rootat_trusted(&st);
        if (d >= 0)
            close(d);
        if (!ok) {
            snprintf(err, len,
                     "the folder of %s is not root's, or others may write it: the "
                     "backups in it are not to be trusted; compare them by hand",
                     b);
            return -1;
        }
        if (o->old[0] && (rootat_hash(rfd, o->backup, h, &kind) < 0 || strcmp(h, o->old))) {
            snprintf(err, len,
                     "%s is not what `vram headless on` moved there from %s: vram puts "
                     "nothing back that it did not keep; compare them by hand",
                     b, p);
            return -1;
        }
    }
    return 0;
}

static int undo(int rfd, const char *root, const struct op *o, char *err, size_t len)
{
    const char *name;
    int d;
    switch (o->kind) {
    case OP_WRITE:
        if ((d = rootat_parent(rfd, o->path, &name)) < 0)
            return errno == ENOENT ? 0 : (rootat_why(root, o->path, errno, "remove", err, len), -1);
        if (unlinkat(d, name, 0) < 0 && errno != ENOENT) {
            rootat_why(root, o->path, errno, "remove", err, len);
            close(d);
            return -1;
        }
        close(d);
        return 0;
    case OP_REPLACE:
    case OP_ASIDE:
        if (!rootat_exists(rfd, o->backup))
            return 0; /* never moved: the original is still in place */
        if (o->kind == OP_ASIDE && rootat_exists(rfd, o->path)) {
            char p[1024], b[1024];
            rootfs_path(root, o->path, p, sizeof p);
            rootfs_path(root, o->backup, b, sizeof b);
            snprintf(err, len, "%s exists again: vram kept the old one as %s; compare them",
                     p, b);
            return -1;
        }
        /* renamed over what vram wrote, which verify() found unchanged */
        if (rootat_move(rfd, o->backup, o->path) < 0) {
            rootat_why(root, o->path, errno, "restore", err, len);
            return -1;
        }
        return 0;
    case OP_MKDIR:
        if ((d = rootat_parent(rfd, o->path, &name)) < 0)
            return 0;
        if (unlinkat(d, name, AT_REMOVEDIR) < 0 && errno != ENOENT && errno != ENOTEMPTY &&
            errno != EEXIST) {
            rootat_why(root, o->path, errno, "remove", err, len);
            close(d);
            return -1;
        }
        close(d);
        return 0;
    }
    return 0;
}

int rootfs_plan_revert(const char *root, void (*fn)(const char *line, void *arg), void *arg,
                       char *err, size_t len)
{
    struct op *ops = calloc(MAX_OPS, sizeof *ops);
    size_t n = 0;
    if (!ops) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    int rc = read_record(root, ops, &n, NULL, err, len);
    int rfd = rc > 0 ? rootat_open_root(root) : -1;
    for (size_t i = 0; rc > 0 && i < n; i++)
        if (rfd < 0 || verify(root, rfd, &ops[i], err, len) < 0)
            rc = -1;
    for (size_t i = n; rc > 0 && i-- > 0;) {
        char p[1024], line[1200];
        rootfs_path(root, ops[i].path, p, sizeof p);
        static const char *const verbs[] = {"remove the directory (if empty)", "remove",
                                            "put back the original of", "put back"};
        snprintf(line, sizeof line, "%s %s", verbs[ops[i].kind], p);
        fn(line, arg);
    }
    if (rfd >= 0)
        close(rfd);
    free(ops);
    return rc < 0 ? -1 : (int)n;
}

int rootfs_revert(const char *root, char *err, size_t len)
{
    struct op *ops = calloc(MAX_OPS, sizeof *ops);
    size_t n = 0;
    if (!ops) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    int rc = read_record(root, ops, &n, NULL, err, len);
    int rfd = rc > 0 ? rootat_open_root(root) : -1;
    if (rc <= 0 || rfd < 0) {
        if (rc > 0)
            snprintf(err, len, "%s: %s", root, strerror(errno));
        free(ops);
        return rc > 0 ? -1 : rc;
    }
    /* nothing half-done: every place to change must be writable, and
     * every file what the record says, before anything moves */
    rc = check_dir(root, rfd, MANIFEST, err, len);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = check_dir(root, rfd, ops[i].path, err, len);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = verify(root, rfd, &ops[i], err, len);
    for (size_t i = n; i-- > 0 && rc == 0;)
        if (ops[i].kind != OP_MKDIR)
            rc = undo(rfd, root, &ops[i], err, len);
    if (rc == 0) {
        const char *name;
        int d = rootat_parent(rfd, MANIFEST, &name);
        if (d >= 0) {
            unlinkat(d, name, 0);
            close(d);
        }
        /* directories last, deepest first: the record's own among them */
        for (size_t i = n; i-- > 0;)
            if (ops[i].kind == OP_MKDIR)
                undo(rfd, root, &ops[i], err, len);
    }
    close(rfd);
    free(ops);
    return rc;
}
