/* ggufset: a folder's GGUF models, read through modeldir (so a store's
 * folder is never left), its subfolders one level down, a split model
 * counted once with the bytes of all its parts. */
#include "model/ggufset.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"
#include "core/units.h"

#define MAX_PARTS 256 /* the parts of one split model whose sizes are added */

struct walk {
    struct ggufset *s;
    const struct modeldir *d;
    const char *sub; /* the subfolder being listed, "" at the top */
    int depth;
};

static void add(struct walk *w, const char *name)
{
    struct ggufset *s = w->s;
    struct ggufname g;
    if (!ggufname_is_model(name) || !ggufname_parse(name, &g))
        return;
    if (s->n == GGUFSET_MAX) {
        s->more++;
        return;
    }
    struct ggufset_file *f = &s->files[s->n];
    int n = snprintf(f->path, sizeof f->path, "%s%s%s", w->sub, w->sub[0] ? "/" : "", name);
    if (n < 0 || (size_t)n >= sizeof f->path)
        return;
    f->name = g;
    f->bytes = 0;
    if (g.parts == 1) {
        modeldir_size(w->d, f->path, &f->bytes);
    } else {
        /* "X-00001-of-00003.gguf": X-0000K-of-00003.gguf for every K */
        size_t stem = strlen(f->path) - 20;
        for (unsigned k = 1; k <= g.parts && k <= MAX_PARTS; k++) {
            char part[300];
            uint64_t b;
            snprintf(part, sizeof part, "%.*s-%05u-of-%05u.gguf", (int)stem, f->path, k, g.parts);
            if (modeldir_size(w->d, part, &b) == 0)
                f->bytes += b;
        }
    }
    s->n++;
}

static int entry(const char *name, void *arg)
{
    struct walk *w = arg;
    size_t l = strlen(name);
    if (l > 5 && !strcasecmp(name + l - 5, ".gguf")) {
        add(w, name);
        return 0;
    }
    if (w->depth > 0 || name[0] == '.' || l >= 200)
        return 0;
    /* a folder one level down (any other entry fails to list, and is passed) */
    struct modeldir sub = *w->d;
    snprintf(sub.dir, sizeof sub.dir, "%s%s%s", w->d->dir,
             w->d->dir[0] && w->d->dir[strlen(w->d->dir) - 1] != '/' ? "/" : "", name);
    snprintf(sub.shown, sizeof sub.shown, "%s/%s", w->d->shown, name);
    struct walk inner = {w->s, w->d, name, 1}; /* sizes are asked of the top folder, by path */
    char err[64];
    modeldir_each(&sub, entry, &inner, err, sizeof err);
    return 0;
}

int ggufset_read(const struct modeldir *d, struct ggufset *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    struct walk w = {s, d, "", 0};
    int rc = modeldir_each(d, entry, &w, err, errlen);
    if (rc != VRAM_OK)
        return rc;
    for (size_t i = 0; i < s->n; i++) {
        s->files[i].tag_unique = s->files[i].name.quant[0] != '\0';
        for (size_t j = 0; j < s->n && s->files[i].tag_unique; j++)
            if (j != i && !strcmp(s->files[i].name.quant, s->files[j].name.quant))
                s->files[i].tag_unique = false;
    }
    return VRAM_OK;
}

int ggufset_pick(const struct ggufset *s, const char *tag)
{
    int found = -1;
    for (size_t i = 0; i < s->n; i++) {
        const char *base = strrchr(s->files[i].path, '/');
        base = base ? base + 1 : s->files[i].path;
        if (!ggufname_matches(base, tag) && strcasecmp(s->files[i].path, tag))
            continue;
        if (found >= 0)
            return -2;
        found = (int)i;
    }
    return found;
}

bool ggufset_split_tag(const char *name, char *base, size_t blen, char *tag, size_t tlen)
{
    const char *colon = strrchr(name, ':'), *slash = strrchr(name, '/');
    if (!colon || (slash && colon < slash) || !colon[1] || colon == name ||
        (size_t)(colon - name) >= blen || strlen(colon + 1) >= tlen) {
        snprintf(base, blen, "%s", name);
        return false;
    }
    snprintf(base, blen, "%.*s", (int)(colon - name), name);
    snprintf(tag, tlen, "%s", colon + 1);
    return true;
}

void ggufset_model_name(const struct ggufset *s, size_t i, const char *repo, char *out, size_t len)
{
    const struct ggufset_file *f = &s->files[i];
    if (f->tag_unique)
        snprintf(out, len, "%s:%s", repo, f->name.quant);
    else
        snprintf(out, len, "%s/%s", repo, f->path);
}

void ggufset_describe(const struct ggufset *s, const char *repo, const char *dir, char *out,
                      size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < s->n && at < len; i++) {
        char name[600], b[32];
        if (repo)
            ggufset_model_name(s, i, repo, name, sizeof name);
        else
            snprintf(name, sizeof name, "%s%s%s", dir, dir[0] ? "/" : "", s->files[i].path);
        int n = snprintf(out + at, len - at, "%s%s (%s)", i ? ", " : "", name,
                         units_fmt_size(s->files[i].bytes, b, sizeof b));
        at += n > 0 ? (size_t)n : 0;
    }
    if (s->more && at < len)
        snprintf(out + at, len - at, " and %zu more", s->more);
}
