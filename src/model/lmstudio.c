/* lmstudio: LM Studio's models folder: one folder per publisher, one per
 * repository in it, the downloaded GGUF files (and mmproj projectors, which
 * are not models) inside; MLX models are folders of safetensors. Opened
 * beneath the folder's root like every store. */
#include "model/lmstudio.h"

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

size_t lmstudio_roots(char roots[][MODELREF_PATH], size_t max)
{
    const char *home = getenv("HOME");
    size_t n = 0;
    if (home && *home && n < max)
        snprintf(roots[n++], MODELREF_PATH, "%s/.lmstudio/models", home);
    if (home && *home && n < max)
        snprintf(roots[n++], MODELREF_PATH, "%s/.cache/lm-studio/models", home);
    return n;
}

static bool part_ok(const char *s, size_t n)
{
    if (!n || n > 200 || s[0] == '.' || memchr(s, '/', n))
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20)
            return false;
    return true;
}

static bool is_gguf(const char *name)
{
    return ggufname_is_model(name);
}

struct look {
    int ggufs;
    char first[256];
    bool config;
};

static int look(const char *name, void *arg)
{
    struct look *l = arg;
    if (is_gguf(name) && l->ggufs++ == 0)
        snprintf(l->first, sizeof l->first, "%s", name);
    if (!strcmp(name, "config.json"))
        l->config = true;
    return 0;
}

static void fill(struct modelref *ref, const char *root, const char *dir, const char *file,
                 const char *shown, int rfd)
{
    memset(ref, 0, sizeof *ref);
    snprintf(ref->name, sizeof ref->name, "%s", shown);
    ref->store = "lmstudio";
    snprintf(ref->root, sizeof ref->root, "%s", root);
    snprintf(ref->dir, sizeof ref->dir, "%s", dir);
    snprintf(ref->file, sizeof ref->file, "%s", file);
    ref->gguf = file[0] != '\0';
    char path[800];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (file[0])
        storepath_size(rfd, path, &ref->disk, &(mode_t){0});
}

/* PUBLISHER/REPO:TAG: the file that answers to TAG. */
static int pick_tag(int rfd, const char *root, const char *dir, const char *tag,
                    struct modelref *ref, char *err, size_t errlen)
{
    struct ggufset *set = malloc(sizeof *set);
    struct modeldir *d = malloc(sizeof *d);
    int rc = set && d ? VRAM_OK : VRAM_EFAIL;
    if (rc == VRAM_OK) {
        modeldir_beneath(d, rfd, root, dir);
        rc = ggufset_read(d, set, err, errlen);
    }
    int i = rc == VRAM_OK ? ggufset_pick(set, tag) : -1;
    if (rc == VRAM_OK && i >= 0 && !strchr(set->files[i].path, '/')) {
        char shown[900];
        snprintf(shown, sizeof shown, "%s/%s", dir, set->files[i].path);
        fill(ref, root, dir, set->files[i].path, shown, rfd);
    } else if (rc == VRAM_OK) {
        char list[1200];
        ggufset_describe(set, NULL, dir, list, sizeof list);
        snprintf(err, errlen, "%s/%s: %s %s: %s", root, dir,
                 i == -2 ? "several GGUF models answer to" : "no GGUF model answers to", tag,
                 set->n ? list : "it has none");
        rc = VRAM_EINPUT;
    }
    free(set);
    free(d);
    return rc;
}

int lmstudio_find(const char *root, const char *name, struct modelref *ref, char *err,
                  size_t errlen)
{
    char base[600], tag[64];
    bool tagged = ggufset_split_tag(name, base, sizeof base, tag, sizeof tag);
    const char *a = strchr(base, '/');
    const char *b = a ? strchr(a + 1, '/') : NULL;
    if (!a || !part_ok(base, (size_t)(a - base)) ||
        !part_ok(a + 1, b ? (size_t)(b - a - 1) : strlen(a + 1)) ||
        (b && !part_ok(b + 1, strlen(b + 1))) || (tagged && b))
        return 1;
    int rfd = open(root, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
    if (rfd < 0)
        return 1;
    char dir[600];
    snprintf(dir, sizeof dir, "%.*s", b ? (int)(b - base) : (int)strlen(base), base);
    struct look l = {0};
    int rc = VRAM_OK;
    if (storepath_list(rfd, dir, look, &l, 10000) < 0) {
        if (errno == ENOENT) {
            rc = 1;
        } else {
            snprintf(err, errlen, "%s/%s: %s", root, dir, storepath_why(errno, 0));
            rc = VRAM_EINPUT;
        }
    } else if (tagged) {
        rc = pick_tag(rfd, root, dir, tag, ref, err, errlen);
    } else if (b) {
        fill(ref, root, dir, b + 1, name, rfd);
    } else if (l.ggufs > 1) {
        struct ggufset *set = malloc(sizeof *set);
        struct modeldir *d = malloc(sizeof *d);
        char list[1200] = "";
        if (set && d) {
            modeldir_beneath(d, rfd, root, dir);
            if (ggufset_read(d, set, err, errlen) == VRAM_OK)
                ggufset_describe(set, NULL, dir, list, sizeof list);
        }
        free(set);
        free(d);
        snprintf(err, errlen, "%s/%s: %d GGUF models; name one, as %s:QUANT or %s/FILE: %s", root,
                 dir, l.ggufs, name, name, list);
        rc = VRAM_EINPUT;
    } else if (l.ggufs == 1 || l.config) {
        fill(ref, root, dir, l.ggufs ? l.first : "", name, rfd);
    } else {
        rc = 1;
    }
    close(rfd);
    return rc;
}

struct walk {
    int rfd;
    const char *root;
    char publisher[256], dir[600];
    int (*each)(const struct modelref *, const char *, void *);
    void *arg;
    int rc;
};

static int file_of(const char *name, void *arg)
{
    struct walk *w = arg;
    if (!is_gguf(name))
        return 0;
    char shown[900];
    struct modelref ref;
    snprintf(shown, sizeof shown, "%s/%s", w->dir, name);
    fill(&ref, w->root, w->dir, name, shown, w->rfd);
    return w->each(&ref, NULL, w->arg);
}

static int repo_of(const char *name, void *arg)
{
    struct walk *w = arg;
    if (!part_ok(name, strlen(name)))
        return 0;
    snprintf(w->dir, sizeof w->dir, "%s/%s", w->publisher, name);
    struct look l = {0};
    if (storepath_list(w->rfd, w->dir, look, &l, 10000) < 0)
        return 0;
    if (l.ggufs)
        return storepath_list(w->rfd, w->dir, file_of, w, 10000);
    if (!l.config)
        return 0;
    struct modelref ref;
    fill(&ref, w->root, w->dir, "", w->dir, w->rfd);
    return w->each(&ref, NULL, w->arg);
}

static int publisher_of(const char *name, void *arg)
{
    struct walk *w = arg;
    if (!part_ok(name, strlen(name)))
        return 0;
    snprintf(w->publisher, sizeof w->publisher, "%s", name);
    int rc = storepath_list(w->rfd, name, repo_of, w, 4096);
    return rc < 0 ? 0 : rc;
}

int lmstudio_list(const char *root, int (*each)(const struct modelref *ref, const char *err, void *arg),
                  void *arg)
{
    struct walk w = {.root = root, .each = each, .arg = arg};
    if ((w.rfd = open(root, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC)) < 0)
        return 0;
    int rc = storepath_list(w.rfd, "", publisher_of, &w, 4096);
    close(w.rfd);
    return rc < 0 ? 0 : rc;
}
