/* confstores: discover = in [serve]: the stores' GGUF models added to a
 * configuration as models of its own. A model is found through
 * model/localstore.c (every file read beneath its store's root, its header
 * checked); its file is known by its real path, which must be inside the
 * store's real root. Its command is the server and that path; at each
 * start the daemon opens the file beneath the root, hands the server the
 * open file in its place (daemon/modelfd.c), and adds the context and -ngl
 * (daemon/discover.c). */
#include "conf/confstores.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/log.h"
#include "core/err.h"
#include "core/modelname.h"
#include "model/localstore.h"
#include "model/modelfile.h"

static bool taken(const struct config *c, const char *name)
{
    for (size_t k = 0; k < c->nmodels; k++) {
        if (modelname_same(name, c->models[k].name))
            return true;
        for (unsigned a = 0; a < c->models[k].naliases; a++)
            if (modelname_same(name, c->models[k].aliases[a]))
                return true;
    }
    return false;
}

static bool excluded(const char *patterns, const char *name)
{
    char buf[sizeof((struct config *)0)->discover_exclude];
    snprintf(buf, sizeof buf, "%s", patterns);
    char *save = NULL;
    for (char *p = strtok_r(buf, ", \t", &save); p; p = strtok_r(NULL, ", \t", &save))
        if (fnmatch(p, name, 0) == 0)
            return true;
    return false;
}

bool confstores_quote(const char *s, char *out, size_t len)
{
    size_t at = 0;
    if (len < 3)
        return false;
    out[at++] = '\'';
    for (; *s; s++) {
        const char *piece = *s == '\'' ? "'\\''" : NULL;
        size_t n = piece ? 4 : 1;
        if (at + n + 2 > len)
            return false;
        memcpy(out + at, piece ? piece : s, n);
        at += n;
    }
    out[at++] = '\'';
    out[at] = '\0';
    return true;
}

struct walk {
    struct config *c;
    unsigned full, skipped;
};

/* The model file's real path, when it is inside the store's real root;
 * *root_len: that root's length in it. */
static bool real_inside(const struct modelref *ref, char *out, size_t len, unsigned *root_len)
{
    char path[3 * MODELREF_PATH], root[PATH_MAX], real[PATH_MAX];
    localstore_path(ref, path, sizeof path);
    if (!realpath(ref->root, root) || !realpath(path, real))
        return false;
    size_t n = strlen(root);
    if (strncmp(real, root, n) || (real[n] != '/' && strcmp(root, "/")) || strlen(real) >= len)
        return false;
    snprintf(out, len, "%s", real);
    *root_len = strcmp(root, "/") ? (unsigned)n : 0;
    return true;
}

static int found(const struct modelref *ref, const char *why, void *arg)
{
    struct walk *w = arg;
    struct config *c = w->c;
    char word[24];
    snprintf(word, sizeof word, " %s ", ref->store ? ref->store : "");
    if (why || !ref->gguf || !strstr(c->discover, word))
        return 0;
    const char *bad = modelname_check(ref->name);
    if (bad || excluded(c->discover_exclude, ref->name) || taken(c, ref->name)) {
        if (bad)
            log_msg(LOG_LV_WARN, "discover: %s model '%.130s' is not served: its name %s",
                    ref->store, ref->name, bad);
        return 0;
    }
    if (c->nmodels == CONFIG_MAX_MODELS) {
        w->full++;
        return 0;
    }
    struct config_model *m = &c->models[c->nmodels];
    char file[CONFIG_PATH_MAX], q[2 * CONFIG_PATH_MAX], qs[2 * CONFIG_PATH_MAX], err[512];
    struct model_info *info = malloc(sizeof *info);
    int rc = info ? localstore_load(ref, info, err, sizeof err) : VRAM_EFAIL;
    free(info);
    unsigned root_len = 0;
    if (rc != VRAM_OK || !real_inside(ref, file, sizeof file, &root_len) ||
        !confstores_quote(file, q, sizeof q) || !confstores_quote(c->llama_server, qs, sizeof qs) ||
        strlen(qs) + strlen(q) + 5 >= sizeof m->command) {
        log_msg(LOG_LV_WARN, "discover: %s model %s is not served: %s", ref->store, ref->name,
                rc != VRAM_OK ? err : "its file is not inside the store, or its path is too long");
        w->skipped++;
        return 0;
    }
    config_model_defaults(m, ref->name);
    snprintf(m->command, sizeof m->command, "%s -m %s", qs, q);
    snprintf(m->file, sizeof m->file, "%s", file);
    m->store_len = root_len;
    snprintf(m->source, sizeof m->source, "%s", ref->store);
    m->api = CONFIG_API_OPENAI; /* llama-server's /v1/...; Ollama's clients are translated */
    m->api_set = true;
    c->nmodels++;
    return 0;
}

/* llama_server = PATH (or a name looked for on PATH), else llama-server on
 * PATH: an executable regular file, its path into c->llama_server. */
static int find_server(struct config *c, char *err, size_t len)
{
    const char *want = c->llama_server[0] ? c->llama_server : "llama-server";
    char cand[CONFIG_PATH_MAX], dirs[4096];
    struct stat st;
    if (strchr(want, '/')) {
        if (stat(want, &st) == 0 && S_ISREG(st.st_mode) && access(want, X_OK) == 0)
            return 0;
        snprintf(err, len, "%s: llama_server = %s: %s; give the path of llama.cpp's llama-server",
                 c->path, want, stat(want, &st) < 0 ? strerror(errno) : "not an executable file");
        return -1;
    }
    const char *path = getenv("PATH");
    snprintf(dirs, sizeof dirs, "%s", path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
    char *save = NULL;
    for (char *dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        if ((size_t)snprintf(cand, sizeof cand, "%s/%s", dir, want) >= sizeof cand)
            continue;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
            snprintf(c->llama_server, sizeof c->llama_server, "%s", cand);
            return 0;
        }
    }
    snprintf(err, len,
             "%s: discover = serves GGUF models with llama.cpp's server, and there is no %s on "
             "PATH (%s): install llama.cpp (its llama-server), or give llama_server = "
             "/path/to/llama-server in [serve]",
             c->path, want, path && *path ? path : "unset");
    return -1;
}

int confstores_add(struct config *c, char *err, size_t len)
{
    if (!c->discover[0])
        return 0;
    if (find_server(c, err, len) < 0)
        return -1;
    size_t before = c->nmodels;
    struct walk w = {c, 0, 0};
    localstore_list(found, &w);
    if (w.full)
        log_msg(LOG_LV_WARN,
                "discover: %u more models are not served: at most %d models in all (exclude "
                "some with discover_exclude =)",
                w.full, CONFIG_MAX_MODELS);
    const char *list = c->discover + 1; /* " ollama huggingface ": its words */
    log_msg(LOG_LV_INFO, "discover (%.*s): %zu models, run by %s", (int)strlen(list) - 1, list,
            c->nmodels - before, c->llama_server);
    return 0;
}
