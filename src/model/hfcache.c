/* hfcache: the Hugging Face hub cache as huggingface_hub lays it out. The
 * revision is refs/main's (a commit hash), else the only snapshot there is;
 * the snapshot's files are links to ../../blobs/HASH, followed beneath the
 * cache's root (model/storepath.c): a link that leaves the cache, or hangs,
 * is refused by name. Size on disk: the repository's blobs. */
#include "model/hfcache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "model/ggufname.h"
#include "model/ggufset.h"
#include "model/storepath.h"

size_t hfcache_roots(char roots[][MODELREF_PATH], size_t max)
{
    const char *hub = getenv("HF_HUB_CACHE"), *home = getenv("HF_HOME");
    const char *xdg = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    if (!max)
        return 0;
    if (hub && *hub)
        snprintf(roots[0], MODELREF_PATH, "%s", hub);
    else if (home && *home)
        snprintf(roots[0], MODELREF_PATH, "%s/hub", home);
    else if (xdg && *xdg)
        snprintf(roots[0], MODELREF_PATH, "%s/huggingface/hub", xdg);
    else if (h && *h)
        snprintf(roots[0], MODELREF_PATH, "%s/.cache/huggingface/hub", h);
    else
        return 0;
    return 1;
}

static bool name_ok(const char *s, size_t n)
{
    if (!n || n > 96 || s[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++)
        if ((s[i] == '-' && i + 1 < n && s[i + 1] == '-') || /* the cache's separator */
            !((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' || s[i] == '-'))
            return false;
    return true;
}

struct one {
    char name[128];
    int n;
};

static int only(const char *name, void *arg)
{
    struct one *o = arg;
    if (o->n++ == 0)
        snprintf(o->name, sizeof o->name, "%s", name);
    return 0;
}

struct sum {
    int rfd;
    char dir[400];
    uint64_t bytes;
    bool gguf, torch; /* GGUF files; safetensors or a config.json */
};

static int add_blob(const char *name, void *arg)
{
    struct sum *s = arg;
    char path[600];
    uint64_t b;
    snprintf(path, sizeof path, "%s/%s", s->dir, name);
    if (storepath_size(s->rfd, path, &b, &(mode_t){0}) == 0)
        s->bytes += b;
    return 0;
}

static int see_kind(const char *name, void *arg)
{
    struct sum *s = arg;
    size_t l = strlen(name);
    if (ggufname_is_model(name))
        s->gguf = true;
    else if ((l > 12 && !strcmp(name + l - 12, ".safetensors")) || !strcmp(name, "config.json"))
        s->torch = true;
    return 0;
}

/* models--ORG--NAME (repo) at the open cache rfd into ref. */
static int resolve(int rfd, const char *root, const char *repo, const char *shown,
                   const char *file, struct modelref *ref, char *err, size_t errlen)
{
    char path[400], rev[128] = "";
    snprintf(path, sizeof path, "%s/refs/main", repo);
    if (storepath_text(rfd, path, rev, sizeof rev) == 0) {
        rev[strcspn(rev, "\r\n")] = '\0';
        if (!name_ok(rev, strlen(rev))) {
            snprintf(err, errlen, "%s/%s: not a revision", root, path);
            return VRAM_EINPUT;
        }
    } else if (errno != ENOENT) {
        snprintf(err, errlen, "%s/%s: %s", root, path, storepath_why(errno, 0));
        return VRAM_EINPUT;
    } else { /* no refs/main: the one snapshot there is */
        struct one o = {0};
        snprintf(path, sizeof path, "%s/snapshots", repo);
        if (storepath_list(rfd, path, only, &o, 64) < 0 || o.n != 1 || !name_ok(o.name, strlen(o.name))) {
            snprintf(err, errlen, "%s/%s: %s", root, path,
                     o.n > 1 ? "several snapshots and no refs/main to choose" : "no snapshot");
            return VRAM_EINPUT;
        }
        snprintf(rev, sizeof rev, "%s", o.name);
    }
    memset(ref, 0, sizeof *ref);
    snprintf(ref->name, sizeof ref->name, "%s", shown);
    ref->store = "huggingface";
    snprintf(ref->root, sizeof ref->root, "%s", root);
    snprintf(ref->dir, sizeof ref->dir, "%s/snapshots/%s", repo, rev);
    snprintf(ref->file, sizeof ref->file, "%s", file ? file : "");
    struct sum s = {.rfd = rfd};
    snprintf(s.dir, sizeof s.dir, "%s/blobs", repo);
    storepath_list(rfd, s.dir, add_blob, &s, 100000);
    storepath_list(rfd, ref->dir, see_kind, &s, 10000);
    ref->disk = s.bytes;
    /* a folder of GGUF files only: llama.cpp's, one of them to be named
     * (REPO:QUANT); with safetensors or a config.json beside, the folder
     * is the transformers model and its GGUF files are models of their own */
    ref->gguf = file ? strlen(file) > 5 && !strcmp(file + strlen(file) - 5, ".gguf")
                     : s.gguf && !s.torch;
    mode_t kind;
    int fd = storepath_open(rfd, ref->dir, 1, &kind);
    if (fd < 0) {
        snprintf(err, errlen, "%s/%s: %s", root, ref->dir, storepath_why(errno, kind));
        return VRAM_EINPUT;
    }
    close(fd);
    return VRAM_OK;
}

/* REPO:TAG: the one GGUF model of the repository's snapshot that answers
 * to TAG, with its own name and size. */
static int pick_tag(int rfd, const char *root, const char *tag, struct modelref *ref, char *err,
                    size_t errlen)
{
    struct ggufset *set = malloc(sizeof *set);
    struct modeldir *d = malloc(sizeof *d);
    int rc = set && d ? VRAM_OK : VRAM_EFAIL;
    if (rc == VRAM_OK) {
        modeldir_beneath(d, rfd, root, ref->dir);
        rc = ggufset_read(d, set, err, errlen);
    }
    int i = rc == VRAM_OK ? ggufset_pick(set, tag) : -1;
    if (rc == VRAM_OK && i < 0) {
        char list[1200];
        ggufset_describe(set, ref->name, "", list, sizeof list);
        snprintf(err, errlen, "%s: %s %s: %s", ref->name,
                 i == -1 ? "no GGUF model answers to" : "several GGUF models answer to", tag,
                 set->n ? list : "it has none");
        rc = VRAM_EINPUT;
    } else if (rc == VRAM_OK) {
        char repo[256];
        snprintf(repo, sizeof repo, "%s", ref->name);
        ggufset_model_name(set, (size_t)i, repo, ref->name, sizeof ref->name);
        snprintf(ref->file, sizeof ref->file, "%s", set->files[i].path);
        ref->disk = set->files[i].bytes;
        ref->gguf = true;
    }
    free(set);
    free(d);
    return rc;
}

/* "DIR/FILE" or "FILE" of a snapshot: parts the cache's names allow */
static bool file_ok(const char *f)
{
    const char *slash = strchr(f, '/');
    if (!slash)
        return name_ok(f, strlen(f));
    return !strchr(slash + 1, '/') && name_ok(f, (size_t)(slash - f)) &&
           name_ok(slash + 1, strlen(slash + 1));
}

int hfcache_find(const char *root, const char *name, struct modelref *ref, char *err,
                 size_t errlen)
{
    char base[300], tag[64];
    bool tagged = ggufset_split_tag(name, base, sizeof base, tag, sizeof tag);
    const char *a = strchr(base, '/');
    const char *b = a ? strchr(a + 1, '/') : NULL;
    size_t lo = a ? (size_t)(a - base) : 0, ln = a ? (b ? (size_t)(b - a - 1) : strlen(a + 1)) : 0;
    if (!a || !name_ok(base, lo) || !name_ok(a + 1, ln) || (b && !file_ok(b + 1)) ||
        (tagged && (b || !name_ok(tag, strlen(tag)))))
        return 1;
    char repo[256], shown[256];
    snprintf(repo, sizeof repo, "models--%.*s--%.*s", (int)lo, base, (int)ln, a + 1);
    snprintf(shown, sizeof shown, "%.*s/%.*s", (int)lo, base, (int)ln, a + 1);
    int rfd = open(root, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
    if (rfd < 0)
        return 1;
    mode_t kind;
    int fd = storepath_open(rfd, repo, 1, &kind);
    int rc;
    if (fd < 0 && errno == ENOENT) {
        rc = 1;
    } else if (fd < 0) {
        snprintf(err, errlen, "%s/%s: %s", root, repo, storepath_why(errno, kind));
        rc = VRAM_EINPUT;
    } else {
        close(fd);
        rc = resolve(rfd, root, repo, shown, b ? b + 1 : NULL, ref, err, errlen);
        if (rc == VRAM_OK && tagged)
            rc = pick_tag(rfd, root, tag, ref, err, errlen);
    }
    close(rfd);
    return rc;
}

struct walk {
    int rfd;
    const char *root;
    int (*each)(const struct modelref *, const char *, void *);
    void *arg;
};

/* A repository's GGUF models, each its own model: REPO:QUANT. */
static int each_gguf(struct walk *w, const struct modelref *repo)
{
    struct ggufset *set = malloc(sizeof *set);
    struct modeldir *d = malloc(sizeof *d);
    char err[600];
    int rc = 0;
    if (set && d) {
        modeldir_beneath(d, w->rfd, w->root, repo->dir);
        if (ggufset_read(d, set, err, sizeof err) != VRAM_OK)
            set->n = 0;
        for (size_t i = 0; i < set->n && !rc; i++) {
            struct modelref ref = *repo;
            ggufset_model_name(set, i, repo->name, ref.name, sizeof ref.name);
            snprintf(ref.file, sizeof ref.file, "%s", set->files[i].path);
            ref.disk = set->files[i].bytes;
            ref.gguf = true;
            rc = w->each(&ref, NULL, w->arg);
        }
    }
    free(set);
    free(d);
    return rc;
}

static int repo_of(const char *name, void *arg)
{
    struct walk *w = arg;
    if (strncmp(name, "models--", 8))
        return 0;
    const char *org = name + 8, *sep = strstr(org, "--");
    if (!sep || !name_ok(org, (size_t)(sep - org)) || !name_ok(sep + 2, strlen(sep + 2)))
        return 0;
    char shown[256], err[600] = "";
    snprintf(shown, sizeof shown, "%.*s/%s", (int)(sep - org), org, sep + 2);
    struct modelref ref;
    int rc = resolve(w->rfd, w->root, name, shown, NULL, &ref, err, sizeof err);
    if (rc != VRAM_OK) {
        memset(&ref, 0, sizeof ref);
        snprintf(ref.name, sizeof ref.name, "%s", shown);
        ref.store = "huggingface";
        return w->each(&ref, err, w->arg);
    }
    if (!ref.gguf) {
        int r = w->each(&ref, NULL, w->arg);
        if (r)
            return r;
    }
    return each_gguf(w, &ref);
}

int hfcache_list(const char *root, int (*each)(const struct modelref *ref, const char *err, void *arg),
                 void *arg)
{
    struct walk w = {.root = root, .each = each, .arg = arg};
    if ((w.rfd = open(root, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC)) < 0)
        return 0;
    int rc = storepath_list(w.rfd, "", repo_of, &w, 4096);
    close(w.rfd);
    return rc < 0 ? 0 : rc;
}
