/* llamacache: llama.cpp's cache folder read beneath its root like every
 * store. The flat layout names a file OWNER_REPO_PATH.gguf (the repo's
 * path with '/' made '_'); which OWNER and REPO a file is of only the
 * manifests say (manifest=OWNER=REPO=TAG.json; '_' may be in either), so
 * the list takes them from there and a file no manifest claims (one
 * fetched with --model-url) is named by its file name. A name asked for
 * gives the prefix itself. Folders models--OWNER--REPO are the Hugging
 * Face layout, read by hfcache. */
#include "model/llamacache.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/err.h"
#include "model/ggufname.h"
#include "model/ggufset.h"
#include "model/hfcache.h"
#include "model/storepath.h"

#define MAX_REPOS 256

size_t llamacache_roots(char roots[][MODELREF_PATH], size_t max)
{
    const char *env = getenv("LLAMA_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (!max)
        return 0;
    if (env && *env)
        snprintf(roots[0], MODELREF_PATH, "%s", env);
    else if (xdg && *xdg)
        snprintf(roots[0], MODELREF_PATH, "%s/llama.cpp", xdg);
    else if (home && *home)
        snprintf(roots[0], MODELREF_PATH, "%s/.cache/llama.cpp", home);
    else
        return 0;
    return 1;
}

static bool part_ok(const char *s, size_t n)
{
    if (!n || n > 96 || s[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' || s[i] == '-'))
            return false;
    return true;
}

struct repo {
    char owner[100], name[100], tag[64]; /* a manifest's: the -hf name as the user typed it */
};

struct cache {
    int rfd;
    const char *root;
    struct modeldir d;
    struct ggufset set; /* its .gguf models */
    struct repo repos[MAX_REPOS];
    size_t nrepos;
};

/* manifest=OWNER=REPO=TAG.json */
static int manifest(const char *name, void *arg)
{
    struct cache *c = arg;
    size_t l = strlen(name);
    if (strncmp(name, "manifest=", 9) || l < 15 || strcmp(name + l - 5, ".json") ||
        c->nrepos == MAX_REPOS)
        return 0;
    const char *o = name + 9, *e1 = strchr(o, '='), *e2 = e1 ? strchr(e1 + 1, '=') : NULL;
    if (!e2 || !part_ok(o, (size_t)(e1 - o)) || !part_ok(e1 + 1, (size_t)(e2 - e1 - 1)))
        return 0;
    struct repo r;
    const char *t = e2 + 1;
    size_t lt = (size_t)(name + l - 5 - t);
    snprintf(r.owner, sizeof r.owner, "%.*s", (int)(e1 - o), o);
    snprintf(r.name, sizeof r.name, "%.*s", (int)(e2 - e1 - 1), e1 + 1);
    snprintf(r.tag, sizeof r.tag, "%.*s", part_ok(t, lt) && lt < sizeof r.tag ? (int)lt : 0, t);
    c->repos[c->nrepos++] = r;
    return 0;
}

static struct cache *open_cache(const char *root, char *err, size_t errlen)
{
    struct cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->root = root;
    if ((c->rfd = open(root, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC)) < 0) {
        free(c);
        return NULL;
    }
    modeldir_beneath(&c->d, c->rfd, root, "");
    storepath_list(c->rfd, "", manifest, c, 100000);
    if (ggufset_read(&c->d, &c->set, err, errlen) != VRAM_OK)
        c->set.n = 0;
    return c;
}

static void close_cache(struct cache *c)
{
    close(c->rfd);
    free(c);
}

/* "OWNER_REPO_" starts file i: what follows, else NULL. */
static const char *after(const struct cache *c, size_t i, const char *owner, const char *repo)
{
    const char *f = c->set.files[i].path;
    size_t lo = strlen(owner), lr = strlen(repo);
    if (strchr(f, '/') || strncmp(f, owner, lo) || f[lo] != '_' || strncmp(f + lo + 1, repo, lr) ||
        f[lo + 1 + lr] != '_')
        return NULL;
    return f + lo + lr + 2;
}

static void fill(const struct cache *c, size_t i, const char *name, struct modelref *ref)
{
    memset(ref, 0, sizeof *ref);
    snprintf(ref->name, sizeof ref->name, "%s", name);
    ref->store = "llamacpp";
    snprintf(ref->root, sizeof ref->root, "%s", c->root);
    snprintf(ref->file, sizeof ref->file, "%s", c->set.files[i].path);
    ref->disk = c->set.files[i].bytes;
    ref->gguf = true;
}

/* File i's name: OWNER/REPO:QUANT when no other file of its repository has
 * that quant, OWNER/REPO/REST otherwise, its file name for a file of none. */
static void name_of(const struct cache *c, size_t i, char *out, size_t len)
{
    const struct repo *best = NULL;
    const char *rest = NULL;
    for (size_t r = 0; r < c->nrepos; r++) {
        const char *a = after(c, i, c->repos[r].owner, c->repos[r].name);
        if (a && (!rest || a > rest)) /* the longest prefix that fits */
            best = &c->repos[r], rest = a;
    }
    const char *f = c->set.files[i].path;
    if (!best) {
        snprintf(out, len, "%.*s", (int)(strlen(f) - 5), f);
        return;
    }
    /* the tag of a manifest of its repository that it alone answers to */
    for (size_t r = 0; r < c->nrepos; r++) {
        const struct repo *m = &c->repos[r];
        if (strcmp(m->owner, best->owner) || strcmp(m->name, best->name) || !m->tag[0] ||
            !ggufname_matches(rest, m->tag))
            continue;
        bool alone = true;
        for (size_t j = 0; j < c->set.n && alone; j++) {
            const char *other = after(c, j, best->owner, best->name);
            alone = j == i || !other || !ggufname_matches(other, m->tag);
        }
        if (alone) {
            snprintf(out, len, "%s/%s:%s", best->owner, best->name, m->tag);
            return;
        }
    }
    const char *q = c->set.files[i].name.quant;
    bool unique = q[0] != '\0';
    for (size_t j = 0; j < c->set.n && unique; j++)
        if (j != i && after(c, j, best->owner, best->name) &&
            !strcmp(c->set.files[j].name.quant, q))
            unique = false;
    if (unique)
        snprintf(out, len, "%s/%s:%s", best->owner, best->name, q);
    else
        snprintf(out, len, "%s/%s/%s", best->owner, best->name, rest);
}

/* The flat layout's answer to name: 0 and ref, 1 when it has none. */
static int find_flat(struct cache *c, const char *name, struct modelref *ref, char *err,
                     size_t errlen)
{
    char base[300], tag[64];
    bool tagged = ggufset_split_tag(name, base, sizeof base, tag, sizeof tag);
    const char *a = strchr(base, '/'), *b = a ? strchr(a + 1, '/') : NULL;
    char owner[100], repo[100];
    if (!a) { /* a file fetched by URL, by its name */
        for (size_t i = 0; i < c->set.n && !tagged; i++)
            if (strlen(c->set.files[i].path) == strlen(name) + 5 &&
                !strncmp(c->set.files[i].path, name, strlen(name))) {
                fill(c, i, name, ref);
                return VRAM_OK;
            }
        return 1;
    }
    size_t ln = b ? (size_t)(b - a - 1) : strlen(a + 1);
    if (!part_ok(base, (size_t)(a - base)) || !part_ok(a + 1, ln) || (tagged && b))
        return 1;
    snprintf(owner, sizeof owner, "%.*s", (int)(a - base), base);
    snprintf(repo, sizeof repo, "%.*s", (int)ln, a + 1);
    int found = -1, n = 0;
    char list[1200] = "";
    size_t at = 0;
    for (size_t i = 0; i < c->set.n; i++) {
        const char *rest = after(c, i, owner, repo);
        if (!rest || (b && strcmp(rest, b + 1)) || (tagged && !ggufname_matches(rest, tag)))
            continue;
        found = (int)i;
        n++;
        char nm[400];
        snprintf(nm, sizeof nm, "%s/%s/%s", owner, repo, rest);
        if (at < sizeof list)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", at ? ", " : "", nm);
    }
    if (n == 0)
        return 1;
    if (n > 1) {
        snprintf(err, errlen, "%s/: %d GGUF models %s %s; name one: %s", c->root, n,
                 tagged ? "answer to" : "of", name, list);
        return VRAM_EINPUT;
    }
    char shown[400];
    name_of(c, (size_t)found, shown, sizeof shown);
    fill(c, (size_t)found, shown, ref);
    return VRAM_OK;
}

int llamacache_find(const char *root, const char *name, struct modelref *ref, char *err,
                    size_t errlen)
{
    int rc = hfcache_find(root, name, ref, err, errlen); /* LLAMA_CACHE in the new layout */
    if (rc == VRAM_OK)
        ref->store = "llamacpp";
    if (rc != 1)
        return rc;
    struct cache *c = open_cache(root, err, errlen);
    if (!c)
        return 1;
    rc = find_flat(c, name, ref, err, errlen);
    close_cache(c);
    return rc;
}

struct relabel {
    int (*each)(const struct modelref *, const char *, void *);
    void *arg;
};

static int relabeled(const struct modelref *ref, const char *err, void *arg)
{
    struct relabel *r = arg;
    struct modelref copy = *ref;
    copy.store = "llamacpp";
    return r->each(&copy, err, r->arg);
}

int llamacache_list(const char *root,
                    int (*each)(const struct modelref *ref, const char *err, void *arg), void *arg)
{
    struct relabel r = {each, arg};
    int rc = hfcache_list(root, relabeled, &r);
    char err[256];
    struct cache *c = rc ? NULL : open_cache(root, err, sizeof err);
    for (size_t i = 0; c && i < c->set.n && !rc; i++) {
        if (strchr(c->set.files[i].path, '/'))
            continue; /* in a folder: not the flat layout's */
        char name[400];
        struct modelref ref;
        name_of(c, i, name, sizeof name);
        fill(c, i, name, &ref);
        rc = each(&ref, NULL, arg);
    }
    if (c)
        close_cache(c);
    return rc;
}
