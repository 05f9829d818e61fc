/* ollama: Ollama's store, read as its files lie: a manifest (JSON, the OCI
 * image manifest Ollama writes) per name and tag, whose layer of mediaType
 * application/vnd.ollama.image.model is the GGUF, stored as
 * blobs/sha256-HEX. Every path is built from checked parts (names of
 * [A-Za-z0-9._-], a digest of 64 hex digits) and opened beneath the store's
 * root, so no manifest can make vram read outside the store. */
#include "model/ollama.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/units.h"
#include "model/jscan.h"
#include "model/storepath.h"

#define DEFAULT_HOST "registry.ollama.ai"
#define DEFAULT_NS   "library"

size_t ollama_roots(char roots[][MODELREF_PATH], size_t max)
{
    const char *env = getenv("OLLAMA_MODELS"), *home = getenv("HOME");
    size_t n = 0;
    if (env && *env && n < max)
        snprintf(roots[n++], MODELREF_PATH, "%s", env);
    if (env && *env)
        return n;
    if (home && *home && n < max)
        snprintf(roots[n++], MODELREF_PATH, "%s/.ollama/models", home);
    if (n < max)
        snprintf(roots[n++], MODELREF_PATH, "/usr/share/ollama/.ollama/models");
    return n;
}

static bool part_ok(const char *s, size_t n)
{
    if (!n || n > 128 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' || s[i] == '-'))
            return false;
    return true;
}

/* "model[:tag]", "ns/model[:tag]", "host/ns/model[:tag]" into the
 * manifest's path; false when name is not of that form. */
static bool manifest_path(const char *name, char *path, size_t len)
{
    char host[130] = DEFAULT_HOST, ns[130] = DEFAULT_NS, model[130], tag[130] = "latest";
    const char *slash = strrchr(name, '/'), *colon = strrchr(name, ':');
    const char *end = colon && (!slash || colon > slash) ? colon : name + strlen(name);
    if (end != name + strlen(name)) {
        if (!part_ok(end + 1, strlen(end + 1)))
            return false;
        snprintf(tag, sizeof tag, "%s", end + 1);
    }
    const char *parts[3];
    size_t lens[3], n = 0;
    for (const char *p = name; p < end && n < 3;) {
        const char *q = memchr(p, '/', (size_t)(end - p));
        size_t l = q ? (size_t)(q - p) : (size_t)(end - p);
        if (!part_ok(p, l))
            return false;
        parts[n] = p;
        lens[n++] = l;
        p = q ? q + 1 : end;
        if (q && p == end)
            return false;
        if (q && n == 3)
            return false;
    }
    if (!n)
        return false;
    snprintf(model, sizeof model, "%.*s", (int)lens[n - 1], parts[n - 1]);
    if (n >= 2)
        snprintf(ns, sizeof ns, "%.*s", (int)lens[n - 2], parts[n - 2]);
    if (n == 3)
        snprintf(host, sizeof host, "%.*s", (int)lens[0], parts[0]);
    snprintf(path, len, "manifests/%s/%s/%s/%s", host, ns, model, tag);
    return true;
}

int ollama_manifest(struct reader *r, const char *name, uint64_t limit, char *blob, size_t len,
                    char *err, size_t errlen)
{
    char b1[32], b2[32];
    if (reader_left(r) > limit) {
        snprintf(err, errlen, "%s: a manifest of %s (real ones are under 2 KiB; vram reads up to %s)",
                 name, units_fmt_size(reader_left(r), b1, sizeof b1),
                 units_fmt_size(limit, b2, sizeof b2));
        return VRAM_EINPUT;
    }
    struct jscan *j = malloc(sizeof *j);
    if (!j)
        return VRAM_EFAIL;
    jscan_init(j, r);
    char digest[80] = "";
    enum jscan_tok t = jscan_next(j);
    bool top = t == JSCAN_OBJ;
    while (top && (t = jscan_next(j)) == JSCAN_KEY) {
        if (!jscan_is(j, "layers")) {
            t = jscan_skip(j);
            if (t == JSCAN_ERR)
                break;
            continue;
        }
        if ((t = jscan_next(j)) != JSCAN_ARR) {
            if (jscan_finish(j, t) == JSCAN_ERR)
                break;
            continue;
        }
        while ((t = jscan_next(j)) == JSCAN_OBJ) { /* one layer */
            char media[64] = "", dig[80] = "";
            while ((t = jscan_next(j)) == JSCAN_KEY) {
                bool m = jscan_is(j, "mediaType"), d = jscan_is(j, "digest");
                t = jscan_next(j);
                if (t == JSCAN_STRING && m)
                    snprintf(media, sizeof media, "%s", j->cut ? "" : j->str);
                else if (t == JSCAN_STRING && d)
                    snprintf(dig, sizeof dig, "%s", j->cut ? "" : j->str);
                else if (jscan_finish(j, t) == JSCAN_ERR)
                    break;
            }
            if (t == JSCAN_ERR)
                break;
            if (!strcmp(media, "application/vnd.ollama.image.model") && !digest[0])
                snprintf(digest, sizeof digest, "%s", dig[0] ? dig : "(none)");
        }
        if (t != JSCAN_ARR_END && t != JSCAN_ERR)
            t = jscan_finish(j, t); /* a layer that is not an object */
        if (t == JSCAN_ERR)
            break;
    }
    if (t == JSCAN_OBJ_END)
        t = jscan_next(j);
    int rc = VRAM_OK;
    if (t != JSCAN_EOF) {
        snprintf(err, errlen, "%s: not a manifest (%s)", name,
                 j->err[0] ? j->err : "the top level is not an object");
        rc = VRAM_EINPUT;
    } else if (!digest[0]) {
        snprintf(err, errlen, "%s: the manifest has no model layer (mediaType "
                              "application/vnd.ollama.image.model)", name);
        rc = VRAM_EINPUT;
    } else {
        const char *hex = !strncmp(digest, "sha256:", 7) ? digest + 7 : "";
        size_t n = strspn(hex, "0123456789abcdef");
        if (n != 64 || hex[64]) {
            snprintf(err, errlen, "%s: the model layer's digest '%.80s' is not sha256:64 hex digits",
                     name, digest);
            rc = VRAM_EINPUT;
        } else {
            snprintf(blob, len, "sha256-%s", hex);
        }
    }
    free(j);
    return rc;
}

static int open_root(const char *root)
{
    return open(root, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
}

/* The manifest at path (beneath the open root rfd) into ref. */
static int resolve(int rfd, const char *root, const char *path, const char *shown,
                   struct modelref *ref, char *err, size_t errlen)
{
    mode_t kind;
    int fd = storepath_open(rfd, path, 0, &kind);
    if (fd < 0) {
        if (errno == ENOENT)
            return 1;
        snprintf(err, errlen, "%s/%s: %s", root, path, storepath_why(errno, kind));
        return VRAM_EINPUT;
    }
    struct reader *r = malloc(sizeof *r);
    if (!r) {
        close(fd);
        return VRAM_EFAIL;
    }
    char where[MODELREF_PATH + 300];
    snprintf(where, sizeof where, "%s/%s", root, path);
    int rc = reader_open_fd(r, fd, where, err, errlen);
    char blob[80];
    if (rc == VRAM_OK) {
        rc = ollama_manifest(r, where, OLLAMA_MAX_MANIFEST, blob, sizeof blob, err, errlen);
        reader_close(r);
    }
    free(r);
    if (rc != VRAM_OK)
        return rc;
    memset(ref, 0, sizeof *ref);
    snprintf(ref->name, sizeof ref->name, "%s", shown);
    ref->store = "ollama";
    snprintf(ref->root, sizeof ref->root, "%s", root);
    snprintf(ref->dir, sizeof ref->dir, "blobs");
    snprintf(ref->file, sizeof ref->file, "%s", blob);
    ref->gguf = true;
    char bpath[128];
    snprintf(bpath, sizeof bpath, "blobs/%s", blob);
    if (storepath_size(rfd, bpath, &ref->disk, &kind) < 0) {
        snprintf(err, errlen, "%s: its model blob %s/%s: %s", where, root, bpath,
                 storepath_why(errno, kind));
        return VRAM_EINPUT;
    }
    return VRAM_OK;
}

int ollama_find(const char *root, const char *name, struct modelref *ref, char *err,
                size_t errlen)
{
    char path[700];
    if (!manifest_path(name, path, sizeof path))
        return 1;
    int rfd = open_root(root);
    if (rfd < 0)
        return 1;
    int rc = resolve(rfd, root, path, name, ref, err, errlen);
    close(rfd);
    return rc;
}

/* The walk of manifests/HOST/NS/MODEL/TAG. */
struct walk {
    int rfd;
    const char *root;
    char path[700];
    int depth;
    int (*each)(const struct modelref *, const char *, void *);
    void *arg;
    unsigned seen;
};

static int step(const char *name, void *arg)
{
    struct walk *w = arg;
    if (!part_ok(name, strlen(name)) || ++w->seen > 4096)
        return 0;
    size_t at = strlen(w->path);
    snprintf(w->path + at, sizeof w->path - at, "/%s", name);
    int rc = 0;
    if (w->depth < 4) {
        w->depth++;
        storepath_list(w->rfd, w->path, step, w, 4096);
        w->depth--;
    } else {
        /* manifests/HOST/NS/MODEL/TAG: shown as Ollama shows it */
        char host[130], ns[130], model[130], shown[400], err[600] = "";
        sscanf(w->path, "manifests/%129[^/]/%129[^/]/%129[^/]", host, ns, model);
        if (!strcmp(host, DEFAULT_HOST) && !strcmp(ns, DEFAULT_NS))
            snprintf(shown, sizeof shown, "%s:%s", model, name);
        else if (!strcmp(host, DEFAULT_HOST))
            snprintf(shown, sizeof shown, "%s/%s:%s", ns, model, name);
        else
            snprintf(shown, sizeof shown, "%s/%s/%s:%s", host, ns, model, name);
        struct modelref ref;
        int r = resolve(w->rfd, w->root, w->path, shown, &ref, err, sizeof err);
        if (r != 1) {
            if (r != VRAM_OK) {
                memset(&ref, 0, sizeof ref);
                snprintf(ref.name, sizeof ref.name, "%s", shown);
                ref.store = "ollama";
            }
            rc = w->each(&ref, r == VRAM_OK ? NULL : err, w->arg);
        }
    }
    w->path[at] = '\0';
    return rc;
}

int ollama_list(const char *root, int (*each)(const struct modelref *ref, const char *err, void *arg),
                void *arg)
{
    struct walk w = {.root = root, .depth = 1, .each = each, .arg = arg};
    if ((w.rfd = open_root(root)) < 0)
        return 0;
    snprintf(w.path, sizeof w.path, "manifests");
    int rc = storepath_list(w.rfd, w.path, step, &w, 4096);
    close(w.rfd);
    return rc < 0 ? 0 : rc;
}
