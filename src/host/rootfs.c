/* rootfs: changes to a root that `vram headless off` can take back.
 *
 * The record (ROOTFS_STATE/manifest) is written before each change, so a
 * crash leaves at most a step recorded but not done; every undo step checks
 * what is there before acting, which makes reverting a half-applied plan,
 * or reverting twice, safe. Replaced files are moved, not copied, into
 * ROOTFS_STATE/backup: their bytes, mode, owner and times come back as they
 * were. */
#include "host/rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST   ROOTFS_STATE "/manifest"
#define BACKUPS    ROOTFS_STATE "/backup"
#define MAGIC      "vram-headless 1"
#define MAX_OPS    64
#define MAX_RELLEN 200

enum op_kind { OP_MKDIR, OP_WRITE, OP_REPLACE, OP_ASIDE };
static const char *const op_names[] = {"mkdir", "write", "replace", "aside"};

struct op {
    enum op_kind kind;
    char path[MAX_RELLEN + 1];
    char backup[MAX_RELLEN + 1];
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

static bool exists(const char *root, const char *rel)
{
    char p[1024];
    struct stat st;
    rootfs_path(root, rel, p, sizeof p);
    return lstat(p, &st) == 0;
}

/* A relative path of plain names: no "..", no "//", no leading '/'. */
static bool safe_rel(const char *rel)
{
    size_t n = strlen(rel);
    if (n == 0 || n > MAX_RELLEN || rel[0] == '/' || rel[n - 1] == '/' || strstr(rel, "//"))
        return false;
    for (const char *c = rel; *c; c++)
        if ((unsigned char)*c <= ' ' || *c == 127)
            return false;
    for (const char *s = rel; s; s = strchr(s, '/') ? strchr(s, '/') + 1 : NULL)
        if (!strncmp(s, "..", 2) && (s[2] == '/' || s[2] == '\0'))
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
            if (sscanf(line, MAGIC " %lld", &t) != 1) {
                snprintf(err, errlen, "%s: line 1 is not a vram record", where);
                return -1;
            }
            continue;
        }
        char kind[16], a[MAX_RELLEN + 2], b[MAX_RELLEN + 2] = "";
        int k = -1;
        int got = sscanf(line, "%15s %201s %201s", kind, a, b);
        for (int i = 0; got >= 2 && i < 4; i++)
            if (!strcmp(kind, op_names[i]))
                k = i;
        bool two = k == OP_REPLACE || k == OP_ASIDE;
        if (k < 0 || *nops == MAX_OPS || got != (two ? 3 : 2) || !safe_rel(a) ||
            (two && (!safe_rel(b) || strncmp(b, BACKUPS "/", sizeof BACKUPS)))) {
            snprintf(err, errlen, "%s: line %u is damaged (\"%.60s\"): nothing was changed", where,
                     no, line);
            return -1;
        }
        ops[*nops].kind = (enum op_kind)k;
        snprintf(ops[*nops].path, sizeof ops[*nops].path, "%s", a);
        snprintf(ops[*nops].backup, sizeof ops[*nops].backup, "%s", b);
        (*nops)++;
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
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, len, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *text = malloc(RECORD_MAX + 1);
    size_t n = text ? fread(text, 1, RECORD_MAX + 1, f) : 0;
    fclose(f);
    int rc = -1;
    if (!text)
        snprintf(err, len, "out of memory");
    else if (n > RECORD_MAX)
        snprintf(err, len, "%s: too large to be a vram record", path);
    else
        rc = parse_record(text, n, path, ops, nops, since, err, len);
    free(text);
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
    unsigned nbackup;
};

static int note(struct journal *j, enum op_kind k, const char *path, const char *backup)
{
    fprintf(j->f, "%s %s%s%s\n", op_names[k], path, backup ? " " : "", backup ? backup : "");
    if (fflush(j->f) || fsync(fileno(j->f)))
        return -1;
    return 0;
}

/* ---- applying ---- */

/* Creates the missing directories of rel's parent, noting each. */
static int make_parents(struct journal *j, const char *rel, char *err, size_t len)
{
    char sub[MAX_RELLEN + 1], p[1024];
    for (const char *s = strchr(rel, '/'); s; s = strchr(s + 1, '/')) {
        snprintf(sub, sizeof sub, "%.*s", (int)(s - rel), rel);
        if (exists(j->root, sub))
            continue;
        rootfs_path(j->root, sub, p, sizeof p);
        if (j->f && note(j, OP_MKDIR, sub, NULL) < 0) {
            snprintf(err, len, "cannot write the record: %s", strerror(errno));
            return -1;
        }
        if (mkdir(p, 0755) < 0) {
            snprintf(err, len, "cannot create %s: %s", p, strerror(errno));
            return -1;
        }
    }
    return 0;
}

static int write_file(const char *path, const char *content)
{
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.vram-new", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    size_t n = strlen(content);
    bool ok = write(fd, content, n) == (ssize_t)n && fsync(fd) == 0;
    ok = (close(fd) == 0) && ok;
    if (!ok || rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    return 0;
}

/* Moves rel into the backups, noting it first. */
static int keep(struct journal *j, enum op_kind k, const char *rel, char *err, size_t len)
{
    char backup[64], from[1024], to[1024];
    snprintf(backup, sizeof backup, BACKUPS "/%u", ++j->nbackup);
    rootfs_path(j->root, rel, from, sizeof from);
    rootfs_path(j->root, backup, to, sizeof to);
    if (note(j, k, rel, backup) < 0 || rename(from, to) < 0) {
        snprintf(err, len, "cannot move %s aside: %s", from, strerror(errno));
        return -1;
    }
    return 0;
}

static int apply_step(struct journal *j, const struct hl_step *s, char *err, size_t len)
{
    char p[1024];
    rootfs_path(j->root, s->path, p, sizeof p);
    if (s->op == HL_ASIDE)
        return exists(j->root, s->path) ? keep(j, OP_ASIDE, s->path, err, len) : 0;
    if (make_parents(j, s->path, err, len) < 0)
        return -1;
    if (exists(j->root, s->path)) {
        if (keep(j, OP_REPLACE, s->path, err, len) < 0)
            return -1;
    } else if (note(j, OP_WRITE, s->path, NULL) < 0) {
        snprintf(err, len, "cannot write the record: %s", strerror(errno));
        return -1;
    }
    if (write_file(p, s->content) < 0) {
        snprintf(err, len, "cannot write %s: %s", p, strerror(errno));
        return -1;
    }
    return 0;
}

/* The nearest existing directory above rel must be writable. */
static int check_dir(const char *root, const char *rel, char *err, size_t len)
{
    char sub[MAX_RELLEN + 1], p[1024];
    snprintf(sub, sizeof sub, "%s", rel);
    for (;;) {
        char *slash = strrchr(sub, '/');
        if (slash)
            *slash = '\0';
        else
            sub[0] = '\0';
        rootfs_path(root, sub, p, sizeof p);
        struct stat st;
        if (stat(p, &st) == 0) {
            if (!S_ISDIR(st.st_mode)) {
                snprintf(err, len, "%s is not a directory", p);
                return -1;
            }
            if (access(p, W_OK) < 0) {
                snprintf(err, len, "cannot write in %s (%s)", p, strerror(errno));
                return -1;
            }
            return 0;
        }
        if (!sub[0]) {
            snprintf(err, len, "%s does not exist", p);
            return -1;
        }
    }
}

int rootfs_check(const char *root, const struct hl_plan *p, char *err, size_t len)
{
    if (check_dir(root, MANIFEST, err, len) < 0)
        return -1;
    for (size_t i = 0; i < p->nsteps; i++) {
        if (!safe_rel(p->steps[i].path)) {
            snprintf(err, len, "bad path in the plan: %s", p->steps[i].path);
            return -1;
        }
        if (check_dir(root, p->steps[i].path, err, len) < 0)
            return -1;
        char f[1024];
        struct stat st;
        rootfs_path(root, p->steps[i].path, f, sizeof f);
        if (lstat(f, &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(err, len, "%s is a directory: move it away first", f);
            return -1;
        }
    }
    return 0;
}

int rootfs_apply(const char *root, const struct hl_plan *p, int64_t now, char *err, size_t len)
{
    if (rootfs_check(root, p, err, len) < 0)
        return -1;
    struct journal j = {NULL, root, 0};
    /* the record's own directories are created first, then noted in it */
    char created[8][MAX_RELLEN + 1];
    size_t ncreated = 0;
    const char *dirs = BACKUPS "/";
    for (const char *s = strchr(dirs, '/'); s && ncreated < 8; s = strchr(s + 1, '/')) {
        char sub[MAX_RELLEN + 1], d[1024];
        snprintf(sub, sizeof sub, "%.*s", (int)(s - dirs), dirs);
        if (exists(root, sub))
            continue;
        rootfs_path(root, sub, d, sizeof d);
        if (mkdir(d, 0755) < 0) {
            snprintf(err, len, "cannot create %s: %s", d, strerror(errno));
            break;
        }
        snprintf(created[ncreated++], MAX_RELLEN + 1, "%s", sub);
    }
    char m[1024];
    rootfs_path(root, MANIFEST, m, sizeof m);
    j.f = exists(root, BACKUPS) ? fopen(m, "wx") : NULL;
    if (!j.f) {
        if (!err[0])
            snprintf(err, len, "cannot create %s: %s", m, strerror(errno));
        for (size_t i = ncreated; i-- > 0;) {
            char d[1024];
            rootfs_path(root, created[i], d, sizeof d);
            rmdir(d);
        }
        return -1;
    }
    fprintf(j.f, MAGIC " %lld\n", (long long)now);
    int rc = 0;
    for (size_t i = 0; i < ncreated && rc == 0; i++)
        rc = note(&j, OP_MKDIR, created[i], NULL);
    if (rc < 0)
        snprintf(err, len, "cannot write %s: %s", m, strerror(errno));
    for (size_t i = 0; i < p->nsteps && rc == 0; i++)
        rc = apply_step(&j, &p->steps[i], err, len);
    fclose(j.f);
    if (rc < 0) {
        char e2[256];
        if (rootfs_revert(root, e2, sizeof e2) < 0 && strlen(err) + 40 < len)
            snprintf(err + strlen(err), len - strlen(err), "; undoing failed too: %s", e2);
    }
    return rc;
}

/* ---- reverting ---- */

static int undo(const char *root, const struct op *o, char *err, size_t len)
{
    char p[1024], b[1024];
    rootfs_path(root, o->path, p, sizeof p);
    rootfs_path(root, o->backup, b, sizeof b);
    switch (o->kind) {
    case OP_WRITE:
        if (unlink(p) < 0 && errno != ENOENT)
            goto fail;
        return 0;
    case OP_REPLACE:
    case OP_ASIDE:
        if (!exists(root, o->backup))
            return 0; /* never moved: the original is still in place */
        if (o->kind == OP_REPLACE && unlink(p) < 0 && errno != ENOENT)
            goto fail;
        if (o->kind == OP_ASIDE && exists(root, o->path)) {
            snprintf(err, len, "%s exists again: vram kept the old one as %s; compare them", p, b);
            return -1;
        }
        if (rename(b, p) < 0)
            goto fail;
        return 0;
    case OP_MKDIR:
        if (rmdir(p) < 0 && errno != ENOENT && errno != ENOTEMPTY && errno != EEXIST)
            goto fail;
        return 0;
    }
fail:
    snprintf(err, len, "cannot restore %s: %s", p, strerror(errno));
    return -1;
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
    for (size_t i = n; rc > 0 && i-- > 0;) {
        char p[1024], line[1200];
        rootfs_path(root, ops[i].path, p, sizeof p);
        static const char *const verbs[] = {"remove the directory (if empty)", "remove",
                                            "put back the original of", "put back"};
        snprintf(line, sizeof line, "%s %s", verbs[ops[i].kind], p);
        fn(line, arg);
    }
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
    if (rc <= 0) {
        free(ops);
        return rc;
    }
    /* nothing half-done: every place to change must be writable first */
    rc = check_dir(root, MANIFEST, err, len);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = check_dir(root, ops[i].path, err, len);
    for (size_t i = n; i-- > 0 && rc == 0;)
        if (ops[i].kind != OP_MKDIR)
            rc = undo(root, &ops[i], err, len);
    if (rc == 0) {
        char m[1024];
        rootfs_path(root, MANIFEST, m, sizeof m);
        unlink(m);
        /* directories last, deepest first: the record's own among them */
        for (size_t i = n; i-- > 0;)
            if (ops[i].kind == OP_MKDIR)
                undo(root, &ops[i], err, len);
    }
    free(ops);
    return rc;
}
