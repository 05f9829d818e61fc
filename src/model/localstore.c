/* localstore: the stores in the order a name is looked for, and the one
 * way a found model is read: its store's root opened (a link to it is
 * followed: people move their stores), then everything beneath it. */
#include "model/localstore.h"

#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "model/ggufset.h"
#include "model/hfcache.h"
#include "model/llamacache.h"
#include "model/lmstudio.h"
#include "model/modelfile.h"
#include "model/ollama.h"

typedef size_t (*roots_fn)(char roots[][MODELREF_PATH], size_t max);
typedef int (*find_fn)(const char *, const char *, struct modelref *, char *, size_t);
typedef int (*list_fn)(const char *, int (*)(const struct modelref *, const char *, void *),
                       void *);

static const struct {
    const char *label;
    roots_fn roots;
    find_fn find;
    list_fn list;
} stores[] = {
    {"Ollama", ollama_roots, ollama_find, ollama_list},
    {"Hugging Face cache", hfcache_roots, hfcache_find, hfcache_list},
    {"LM Studio", lmstudio_roots, lmstudio_find, lmstudio_list},
    {"llama.cpp cache", llamacache_roots, llamacache_find, llamacache_list},
};
enum { OLLAMA, HF, LMSTUDIO, LLAMACPP, NSTORES };

static int find_in(int s, const char *name, struct modelref *ref, char *err, size_t errlen)
{
    char roots[4][MODELREF_PATH];
    size_t n = stores[s].roots(roots, 4);
    for (size_t i = 0; i < n; i++) {
        int rc = stores[s].find(roots[i], name, ref, err, errlen);
        if (rc != 1)
            return rc;
    }
    return 1;
}

int localstore_find(const char *name, struct modelref *ref, char *err, size_t errlen)
{
    static const int ollama_first[] = {OLLAMA, LMSTUDIO, HF, LLAMACPP},
                     repo_first[] = {HF, LLAMACPP, LMSTUDIO, OLLAMA};
    /* "x:tag" is Ollama's, but "org/repo:QUANT" is llama.cpp's -hf name */
    const char *colon = strrchr(name, ':'), *slash = strchr(name, '/');
    const int *order = !slash || (colon && colon < slash) ? ollama_first
                       : colon && strchr(slash + 1, '/') ? ollama_first /* host/ns/model:tag */
                                                         : repo_first;
    /* a store that has the name but cannot give it (a tag it does not
     * have, a hostile file) says why, unless another store has it */
    char why[1024] = "";
    for (int k = 0; k < NSTORES; k++) {
        int rc = find_in(order[k], name, ref, err, errlen);
        if (rc == VRAM_OK)
            return rc;
        if (rc != 1 && !why[0])
            snprintf(why, sizeof why, "%s", err);
        else if (rc != 1 && rc != VRAM_EINPUT)
            return rc;
    }
    if (why[0]) {
        snprintf(err, errlen, "%s", why);
        return VRAM_EINPUT;
    }
    return 1;
}

void localstore_list(int (*each)(const struct modelref *ref, const char *err, void *arg), void *arg)
{
    for (int s = 0; s < NSTORES; s++) {
        char roots[4][MODELREF_PATH];
        size_t n = stores[s].roots(roots, 4);
        for (size_t i = 0; i < n; i++)
            stores[s].list(roots[i], each, arg);
    }
}

/* A repository of GGUF files named without its tag: its one model, or
 * which there are, as REPO:QUANT names. */
static int only_gguf(const struct modeldir *d, const struct modelref *ref, char *one, size_t len,
                     char *err, size_t errlen)
{
    one[0] = '\0';
    struct ggufset *s = malloc(sizeof *s);
    if (!s)
        return VRAM_EFAIL;
    int rc = ggufset_read(d, s, err, errlen);
    if (rc == VRAM_OK && s->n == 1) {
        snprintf(one, len, "%s", s->files[0].path);
    } else if (rc == VRAM_OK && s->n > 1) {
        char list[1536];
        ggufset_describe(s, ref->name, "", list, sizeof list);
        snprintf(err, errlen, "%s: %zu GGUF models; name one: %s", ref->name, s->n + s->more, list);
        rc = VRAM_EINPUT;
    }
    free(s);
    return rc;
}

int localstore_load(const struct modelref *ref, struct model_info *m, char *err, size_t errlen)
{
    int rfd = open(ref->root, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
    if (rfd < 0) {
        snprintf(err, errlen, "%s: cannot open the store", ref->root);
        return VRAM_EINPUT;
    }
    struct modeldir d;
    modeldir_beneath(&d, rfd, ref->root, ref->dir);
    char one[256] = "";
    int rc = VRAM_OK;
    const char *file = ref->file[0] ? ref->file : NULL;
    if (!file && ref->gguf)
        rc = only_gguf(&d, ref, one, sizeof one, err, errlen);
    if (rc == VRAM_OK)
        rc = modelfile_load_at(&d, file ? file : one[0] ? one : NULL, m, err, errlen);
    close(rfd);
    if (rc == VRAM_OK)
        snprintf(m->name, sizeof m->name, "%s", ref->name);
    return rc;
}

void localstore_path(const struct modelref *ref, char *out, size_t len)
{
    snprintf(out, len, "%s%s%s%s%s", ref->root, ref->dir[0] ? "/" : "", ref->dir,
             ref->file[0] ? "/" : "", ref->file);
}

void localstore_where(char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (int s = 0; s < NSTORES && at < len; s++) {
        char roots[4][MODELREF_PATH];
        size_t n = stores[s].roots(roots, 4);
        at += (size_t)snprintf(out + at, len - at, "%s%s (", s ? ", " : "", stores[s].label);
        for (size_t i = 0; i < n && at < len; i++)
            at += (size_t)snprintf(out + at, len - at, "%s%s", i ? ", " : "", roots[i]);
        if (at < len)
            at += (size_t)snprintf(out + at, len - at, "%s)", n ? "" : "none");
    }
}
