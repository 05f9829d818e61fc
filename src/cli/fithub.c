/* fithub: the hub's model, its headers fetched into a sparse copy in the
 * cache. The cache's folders are the user's (0700) and named only after
 * checked names (model/hubrepo.c); files are opened beneath the copy's
 * folder, never through a link. What was fetched is said in the copy's
 * .have (JSON: each file's blob id, size and the bytes at its start that
 * are there), written after the file, so that a file whose fetch broke off
 * is fetched again. */
#include "cli/fithub.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/hubfetch.h"
#include "cli/progress.h"
#include "core/err.h"
#include "model/gguf.h"
#include "model/hfconfig.h"
#include "model/hubrepo.h"
#include "model/safetensors.h"

#define FIRST_BYTES (1u << 20) /* a GGUF's first fetch: most headers are a few MiB */
#define ST_FIRST    (64u << 10)
#define MAX_FILE    (1ULL << 44) /* a size in the listing past 16 TiB is no model's */

bool fithub_is_name(const char *arg)
{
    char org[HUBREPO_NAME_MAX], repo[HUBREPO_NAME_MAX], tag[32];
    return hubrepo_name(arg, org, repo, tag);
}

/* path made, each folder 0700 where it is made. */
static int make_dirs(char *path)
{
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p)
            continue;
        char c = *p;
        *p = '\0';
        int rc = mkdir(path, 0700);
        *p = c;
        if (rc < 0 && errno != EEXIST)
            return -1;
        if (!c)
            return 0;
    }
}

static int cache_dir(const char *org, const char *repo, char *out, size_t len)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n = xdg && xdg[0] == '/' ? snprintf(out, len, "%s/vram/hub/%s/%s", xdg, org, repo)
            : home && home[0] == '/' ? snprintf(out, len, "%s/.cache/vram/hub/%s/%s", home, org, repo)
                                     : -1;
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* A file written whole under a new name, then renamed into place. */
static int write_whole(int dfd, const char *name, const void *p, size_t n)
{
    char tmp[300];
    snprintf(tmp, sizeof tmp, ".%s.new", name);
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    ssize_t w = write(fd, p, n);
    int rc = w == (ssize_t)n && close(fd) == 0 ? renameat(dfd, tmp, dfd, name) : -1;
    if (w != (ssize_t)n)
        close(fd);
    return rc;
}

/* The first n bytes of a file of size bytes: at its start, the rest a hole. */
static int write_sparse(int dfd, const char *name, const void *p, size_t n, uint64_t size)
{
    int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int rc = pwrite(fd, p, n, 0) == (ssize_t)n && ftruncate(fd, (off_t)size) == 0 ? 0 : -1;
    return close(fd) == 0 ? rc : -1;
}

struct job {
    struct hubfetch *f;
    const char *org, *repo;
    int dfd;
    char *buf;
    size_t n;
    char *err;
    size_t errlen;
};

/* Bytes [from, to) of path appended to j->buf (which holds from bytes);
 * with whole, the file itself (of to bytes), no range asked. */
static int get(struct job *j, const char *path, uint64_t from, uint64_t to, bool whole)
{
    char url[600], *got;
    size_t n;
    snprintf(url, sizeof url, "/%s/%s/resolve/main/%s", j->org, j->repo, path);
    long st = hubfetch_get(j->f, url, from, whole ? 0 : to - from, (size_t)(to - from), &got, &n,
                           j->err, j->errlen);
    if (st < 0)
        return -1;
    if ((st != 200 && st != 206) || n != to - from) {
        snprintf(j->err, j->errlen, "%s: the hub answered %ld with %zu bytes for bytes %llu to %llu",
                 path, st, n, (unsigned long long)from, (unsigned long long)to);
        free(got);
        return -1;
    }
    char *b = realloc(j->buf, (size_t)to + 1);
    if (!b) {
        free(got);
        snprintf(j->err, j->errlen, "out of memory");
        return -1;
    }
    memcpy(b + from, got, n);
    j->buf = b;
    j->n = (size_t)to;
    free(got);
    return 0;
}

static int more(struct job *j, const char *path, uint64_t from, uint64_t to)
{
    return get(j, path, from, to, false);
}

/* As far into a GGUF as its parser reads: the first MiB, then four times
 * as much each time the parser wants more, up to its own limit. */
static int gguf_header(struct job *j, const struct hubrepo_file *f)
{
    struct model_info *m = malloc(sizeof *m);
    if (!m)
        return -1;
    uint64_t limit = f->size < GGUF_MAX_HEADER ? f->size : GGUF_MAX_HEADER;
    uint64_t want = FIRST_BYTES < limit ? FIRST_BYTES : limit;
    int rc = -1;
    while (more(j, f->path, j->n, want) == 0) {
        struct reader r;
        reader_open_mem_prefix(&r, j->buf, j->n, f->size);
        char perr[512];
        if (gguf_parse_max(&r, f->path, GGUF_MAX_HEADER, m, perr, sizeof perr) == VRAM_OK) {
            rc = 0;
            break;
        }
        if (!r.beyond || want == limit) {
            snprintf(j->err, j->errlen, "%s", perr);
            break;
        }
        want = want * 4 < limit ? want * 4 : limit;
    }
    free(m);
    return rc;
}

/* A safetensors file's length and JSON header. */
static int st_header(struct job *j, const struct hubrepo_file *f)
{
    uint64_t first = f->size < ST_FIRST ? f->size : ST_FIRST;
    if (f->size < 8 || more(j, f->path, 0, first) < 0) {
        if (f->size < 8)
            snprintf(j->err, j->errlen, "%s: %llu bytes: too short for a safetensors file",
                     f->path, (unsigned long long)f->size);
        return -1;
    }
    uint64_t len = 0;
    for (int i = 7; i >= 0; i--)
        len = len << 8 | (unsigned char)j->buf[i];
    if (len > SAFETENSORS_MAX_HEADER || len > f->size - 8) {
        snprintf(j->err, j->errlen, "%s: its header length is impossible", f->path);
        return -1;
    }
    return 8 + len > j->n ? more(j, f->path, j->n, 8 + len) : 0;
}

static int whole(struct job *j, const struct hubrepo_file *f)
{
    uint64_t max = strstr(f->path, "index") ? SAFETENSORS_MAX_INDEX : HFCONFIG_MAX;
    if (f->size > max) {
        snprintf(j->err, j->errlen, "%s: larger than vram reads", f->path);
        return -1;
    }
    return f->size ? get(j, f->path, 0, f->size, true) : 0;
}

static const char *base_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Whether the copy already holds f (its blob id and size are the same). */
static bool kept(json_t *have, int dfd, const struct hubrepo_file *f)
{
    json_t *e = json_object_get(have, base_of(f->path));
    struct stat st;
    const char *oid = json_string_value(json_object_get(e, "oid"));
    return f->oid[0] && oid && !strcmp(oid, f->oid) &&
           json_integer_value(json_object_get(e, "size")) == (json_int_t)f->size &&
           fstatat(dfd, base_of(f->path), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
           (uint64_t)st.st_size == f->size;
}

/* Files of the copy the model does not have (an older pick's) go. */
static void sweep(int dfd, const struct hubrepo *h, const struct hubrepo_pick *p)
{
    int d2 = dup(dfd);
    DIR *d = d2 >= 0 ? fdopendir(d2) : NULL;
    if (!d) {
        if (d2 >= 0)
            close(d2);
        return;
    }
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        bool mine = false;
        for (size_t k = 0; k < p->n && !mine; k++)
            mine = !strcmp(base_of(h->files[p->file[k]].path), e->d_name);
        if (!mine)
            unlinkat(dfd, e->d_name, 0);
    }
    closedir(d);
}

/* The repository's list: fetched, kept; the kept one when the hub cannot
 * be reached. */
static char *listing(struct hubfetch *f, const char *org, const char *repo, int rdfd, size_t *n,
                     struct fithub_model *out, bool *input, char *err, size_t errlen)
{
    char path[300], *text = NULL;
    snprintf(path, sizeof path, "/api/models/%s/%s/tree/main?recursive=true", org, repo);
    long st = hubfetch_get(f, path, 0, 0, HUBREPO_MAX_TREE, &text, n, err, errlen);
    if (st == 200) {
        write_whole(rdfd, "tree.json", text, *n);
        return text;
    }
    free(text);
    *input = st == 401 || st == 403 || st == 404; /* the name, not the network */
    if (st > 0) {
        snprintf(err, errlen, "%s/%s on %s: %s", org, repo, hubfetch_host(f),
                 st == 401 || st == 403
                     ? "gated or private: accept its terms on the hub, and set HF_TOKEN to a token "
                       "of yours"
                 : st == 404 ? "no such repository (its name is ORG/REPO, as on the hub's page)"
                             : "the hub answered with an error");
        if (st != 401 && st != 403 && st != 404)
            snprintf(err + strlen(err), errlen - strlen(err), " (%ld)", st);
        return NULL;
    }
    /* the network: the list kept last time, if there is one */
    int fd = openat(rdfd, "tree.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size > HUBREPO_MAX_TREE ||
        !(text = malloc((size_t)sb.st_size + 1)) ||
        read(fd, text, (size_t)sb.st_size) != sb.st_size) {
        if (fd >= 0)
            close(fd);
        free(text);
        return NULL; /* err says what the network did */
    }
    close(fd);
    *n = (size_t)sb.st_size;
    char when[32];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime(&sb.st_mtime));
    snprintf(out->note, sizeof out->note, "offline (%.150s): the list of its files kept on %s",
             err, when);
    return text;
}

static int fetch_files(struct job *j, const struct hubrepo *h, const struct hubrepo_pick *p)
{
    json_t *have = NULL;
    int hfd = openat(j->dfd, ".have", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (hfd >= 0) {
        have = json_loadfd(hfd, 0, NULL);
        close(hfd);
    }
    if (!json_is_object(have)) {
        json_decref(have);
        have = json_object();
    }
    int rc = 0;
    for (size_t k = 0; k < p->n && rc == 0; k++) {
        const struct hubrepo_file *f = &h->files[p->file[k]];
        if (kept(have, j->dfd, f))
            continue;
        if (f->size > MAX_FILE) {
            snprintf(j->err, j->errlen, "%s: %llu bytes: no model file is that large", f->path,
                     (unsigned long long)f->size);
            rc = -1;
            break;
        }
        free(j->buf);
        j->buf = NULL;
        j->n = 0;
        rc = p->how[k] == HUBREPO_GGUF          ? gguf_header(j, f)
             : p->how[k] == HUBREPO_SAFETENSORS ? st_header(j, f)
                                                : whole(j, f);
        if (rc == 0 && write_sparse(j->dfd, base_of(f->path), j->buf, j->n, f->size) < 0) {
            snprintf(j->err, j->errlen, "the cache: %s: %s", base_of(f->path), strerror(errno));
            rc = -1;
        }
        if (rc == 0)
            json_object_set_new(have, base_of(f->path),
                                json_pack("{s:s, s:I, s:I}", "oid", f->oid, "size",
                                          (json_int_t)f->size, "have", (json_int_t)j->n));
    }
    char *text = json_dumps(have, JSON_COMPACT);
    if (text)
        write_whole(j->dfd, ".have", text, strlen(text));
    free(text);
    json_decref(have);
    return rc;
}

int fithub_fetch(const char *arg, struct fithub_model *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char org[HUBREPO_NAME_MAX], repo[HUBREPO_NAME_MAX], tag[32];
    if (!hubrepo_name(arg, org, repo, tag)) {
        snprintf(err, errlen, "%s: not a hub name (ORG/REPO or ORG/REPO:QUANT)", arg);
        return VRAM_EINPUT;
    }
    char dir[900];
    if (cache_dir(org, repo, dir, sizeof dir) < 0 || make_dirs(dir) < 0) {
        snprintf(err, errlen, "the cache for %s/%s (%s): %s; set XDG_CACHE_HOME to a folder of "
                              "yours",
                 org, repo, dir, strerror(errno ? errno : ENAMETOOLONG));
        return VRAM_EFAIL;
    }
    struct hubfetch *f = hubfetch_open(err, errlen);
    if (!f)
        return VRAM_EFAIL;
    int rdfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct progress pr;
    char what[300];
    snprintf(what, sizeof what, "reading %s/%s's headers from %s", org, repo, hubfetch_host(f));
    progress_start(&pr, what);
    size_t n = 0;
    struct hubrepo h = {0};
    struct hubrepo_pick *p = calloc(1, sizeof *p);
    struct job j = {f, org, repo, -1, NULL, 0, err, errlen};
    int rc = VRAM_EFAIL;
    bool input = false;
    char *text = rdfd >= 0 && p ? listing(f, org, repo, rdfd, &n, out, &input, err, errlen) : NULL;
    if (!text && input)
        rc = VRAM_EINPUT;
    if (text && hubrepo_parse(text, n, &h, err, errlen) == 0) {
        char name[2 * HUBREPO_NAME_MAX + 2];
        snprintf(name, sizeof name, "%s/%s", org, repo);
        if (hubrepo_pick(&h, name, tag, p, err, errlen) < 0) {
            char e2[1400];
            snprintf(e2, sizeof e2, "%s: %s", name, err);
            snprintf(err, errlen, "%s", e2);
            rc = VRAM_EINPUT;
        } else {
            const char *sub = p->quant[0] ? p->quant : "safetensors";
            snprintf(out->dir, sizeof out->dir, "%s/%s", dir, sub);
            mkdirat(rdfd, sub, 0700);
            j.dfd = openat(rdfd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (j.dfd < 0)
                snprintf(err, errlen, "the cache: %s: %s", out->dir, strerror(errno));
            else if (fetch_files(&j, &h, p) == 0)
                rc = VRAM_OK;
            if (j.dfd >= 0)
                sweep(j.dfd, &h, p);
            snprintf(out->name, sizeof out->name, "%s/%s%s%s", org, repo, p->quant[0] ? ":" : "",
                     p->quant);
            out->bytes = p->bytes;
        }
    } else if (!text && rdfd < 0) {
        snprintf(err, errlen, "the cache: %s: %s", dir, strerror(errno));
    }
    progress_stop(&pr);
    if (j.dfd >= 0)
        close(j.dfd);
    if (rdfd >= 0)
        close(rdfd);
    free(j.buf);
    free(text);
    free(p);
    hubrepo_free(&h);
    hubfetch_close(f);
    return rc;
}
