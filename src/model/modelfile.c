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
    else if (ends(name, ".gguf") && strncmp(name, "mmproj", 6) && strlen(name) < sizeof c->gguf &&
             c->ggufs++ == 0)
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
        } else if (c.ggufs > 1) {
            snprintf(err, errlen, "%s: %d GGUF files in this folder: name the one to fit", d->shown,
                     c.ggufs);
            return VRAM_EINPUT;
        } else {
            snprintf(err, errlen,
                     "%s: no *.safetensors, model.safetensors.index.json, config.json or .gguf "
                     "in this folder",
                     d->shown);
            return VRAM_EINPUT;
        }
    }
    /* names and messages carry the file's bytes, printed by vram fit */
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
