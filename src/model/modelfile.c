/* modelfile: any model into a model_info, by what it is: a folder of shards
 * (or with only a config.json, or with one GGUF), or a file recognised by
 * its first bytes, not its name. Every file is opened through modeldir, so
 * a model inside a store is read without leaving the store. */
#include "model/modelfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/err.h"
#include "core/textsafe.h"
#include "model/gguf.h"
#include "model/ggufname.h"
#include "model/ggufset.h"
#include "model/hfconfig.h"
#include "model/reader.h"
#include "model/safetensors.h"

static bool ends(const char *s, const char *suffix)
{
    size_t l = strlen(s), k = strlen(suffix);
    return l > k && !strcmp(s + l - k, suffix);
}

/* What a folder holds: shards, and how many GGUFs (projectors aside). */
struct contents {
    bool shards, config;
    int ggufs;
    char gguf[256];
};

static int look(const char *name, void *arg)
{
    struct contents *c = arg;
    if (ends(name, ".safetensors") || !strcmp(name, "model.safetensors.index.json"))
        c->shards = true;
    else if (!strcmp(name, "config.json"))
        c->config = true;
    else if (ggufname_is_model(name) && strlen(name) < sizeof c->gguf && c->ggufs++ == 0)
        snprintf(c->gguf, sizeof c->gguf, "%s", name);
    return 0;
}

static void base_name(const char *path, char *out, size_t len)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", path);
    size_t l = strlen(tmp);
    while (l > 1 && tmp[l - 1] == '/')
        tmp[--l] = '\0';
    const char *b = strrchr(tmp, '/');
    b = b ? b + 1 : tmp;
    snprintf(out, len, "%s", b);
    char *dot = strrchr(out, '.');
    if (dot && (!strcmp(dot, ".gguf") || !strcmp(dot, ".safetensors") || !strcmp(dot, ".json")))
        *dot = '\0';
}

struct file_job {
    const struct modeldir *d;
    const char *file;
    struct model_info *m;
    char *err;
    size_t errlen;
};

/* A file, by its first bytes. */
static int by_magic(struct reader *r, const char *name, void *arg)
{
    struct file_job *j = arg;
    unsigned char magic[8] = {0};
    uint64_t n = r->size < 8 ? r->size : 8;
    if (reader_read(r, magic, n) < 0)
        n = 0;
    r->pos = 0;
    if (n >= 4 && !memcmp(magic, "GGUF", 4))
        return gguf_parse(r, name, j->m, j->err, j->errlen);
    if (n >= 1 && (magic[0] == '{' || magic[0] == ' ' || magic[0] == '\n'))
        return hfconfig_parse(r, name, HFCONFIG_MAX, j->m, j->err, j->errlen);
    if (n == 8)
        return 1; /* a safetensors file: read with its folder's config.json */
    snprintf(j->err, j->errlen, "%s: not a model file vram reads (GGUF, safetensors, config.json)",
             name);
    return VRAM_EINPUT;
}

/* A folder of several GGUF models: which, so that the user can name one. */
static int several(const struct modeldir *d, char *err, size_t errlen)
{
    struct ggufset *s = malloc(sizeof *s);
    if (!s)
        return VRAM_EFAIL;
    char list[1536];
    if (ggufset_read(d, s, err, errlen) != VRAM_OK)
        snprintf(list, sizeof list, "(unreadable)");
    else
        ggufset_describe(s, NULL, d->shown, list, sizeof list);
    snprintf(err, errlen, "%s: %zu GGUF models in this folder; name one: %s", d->shown,
             s->n + s->more, list);
    free(s);
    return VRAM_EINPUT;
}

/* A GGUF model split over files (X-00001-of-00003.gguf): the tensors of
 * the other parts, added to what the first said. */
static int other_parts(const struct modeldir *d, const char *file, struct model_info *m, char *err,
                       size_t errlen)
{
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    struct ggufname g;
    if (!m->embed_bytes && !m->output_bytes && !m->weight_bytes)
        return VRAM_OK; /* not a GGUF */
    if (!ggufname_parse(base, &g) || g.parts < 2 || g.part != 1)
        return VRAM_OK;
    struct model_info *t = malloc(sizeof *t);
    if (!t)
        return VRAM_EFAIL;
    size_t stem = strlen(file) - 20; /* "-00001-of-00003.gguf" */
    int rc = VRAM_OK;
    for (unsigned k = 2; k <= g.parts && rc == VRAM_OK; k++) {
        char part[600];
        snprintf(part, sizeof part, "%.*s-%05u-of-%05u.gguf", (int)stem, file, k, g.parts);
        struct file_job j = {d, part, t, err, errlen};
        rc = modeldir_parse(d, part, by_magic, &j, err, errlen);
        if (rc == 1) {
            snprintf(err, errlen, "%s/%s: not a GGUF file", d->shown, part);
            rc = VRAM_EINPUT;
        }
        if (rc != VRAM_OK)
            break;
        m->params += t->params;
        m->weight_bytes += t->weight_bytes;
        m->embed_bytes += t->embed_bytes;
        m->output_bytes += t->output_bytes;
        for (unsigned l = 0; l < MODEL_MAX_LAYERS; l++)
            m->layer_bytes[l] += t->layer_bytes[l];
        m->tied_embeddings = m->tied_embeddings && t->tied_embeddings;
    }
    free(t);
    if (rc == VRAM_OK && m->params) {
        m->stored_bits = 8.0 * (double)m->weight_bytes / (double)m->params;
        m->params_active = m->params;
        if (m->experts) {
            uint64_t active = 0;
            model_count_params(m, &active);
            m->params_active = active;
        }
    }
    return rc;
}

int modelfile_load_at(const struct modeldir *d, const char *file, struct model_info *m, char *err,
                      size_t errlen)
{
    memset(m, 0, sizeof *m);
    int rc;
    if (file) {
        struct file_job j = {d, file, m, err, errlen};
        rc = modeldir_parse(d, file, by_magic, &j, err, errlen);
        if (rc == 1)
            rc = safetensors_load(d, file, m, err, errlen);
    } else {
        struct contents c = {0};
        rc = modeldir_each(d, look, &c, err, errlen);
        if (rc != VRAM_OK)
            return rc;
        if (c.shards) {
            rc = safetensors_load(d, NULL, m, err, errlen);
        } else if (c.config) {
            struct file_job j = {d, "config.json", m, err, errlen};
            rc = modeldir_parse(d, "config.json", by_magic, &j, err, errlen);
        } else if (c.ggufs == 1) {
            struct file_job j = {d, c.gguf, m, err, errlen};
            rc = modeldir_parse(d, c.gguf, by_magic, &j, err, errlen);
            if (rc == VRAM_OK)
                rc = other_parts(d, c.gguf, m, err, errlen);
        } else if (c.ggufs > 1) {
            return several(d, err, errlen);
        } else {
            snprintf(err, errlen,
                     "%s: no *.safetensors, model.safetensors.index.json, config.json or .gguf "
                     "in this folder",
                     d->shown);
            return VRAM_EINPUT;
        }
    }
    /* names and messages carry the file's bytes, printed by vram fit */
    if (rc == VRAM_OK && file)
        rc = other_parts(d, file, m, err, errlen);
    if (rc != VRAM_OK)
        return textsafe(err), rc;
    if (!m->name[0])
        base_name(file ? file : d->shown, m->name, sizeof m->name);
    textsafe(m->name);
    textsafe(m->arch);
    textsafe(m->stored);
    model_complete(m);
    if (!m->params_active)
        m->params_active = m->params;
    return VRAM_OK;
}

int modelfile_load(const char *path, struct model_info *m, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return VRAM_EINPUT;
    }
    struct modeldir *d = malloc(sizeof *d);
    if (!d)
        return VRAM_EFAIL;
    int rc;
    if (S_ISDIR(st.st_mode)) {
        modeldir_plain(d, path);
        rc = modelfile_load_at(d, NULL, m, err, errlen);
    } else {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        const char *file = slash ? path + (slash - dir) + 1 : path;
        if (slash)
            slash[slash == dir] = '\0'; /* "/x.gguf": the folder is "/" */
        modeldir_plain(d, slash ? dir : ".");
        if (!slash)
            snprintf(d->shown, sizeof d->shown, "%s", "");
        rc = modelfile_load_at(d, file, m, err, errlen);
    }
    free(d);
    return rc;
}
