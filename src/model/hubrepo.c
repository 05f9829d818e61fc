/* hubrepo: the hub's listing read with jansson, bounded; the GGUF models
 * in it picked as a local folder's are (model/ggufset.c's rules, the
 * listing standing for the folder). */
#include "model/hubrepo.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/ggufname.h"
#include "model/ggufset.h"

/* An org's or a repo's name as the hub allows them: letters, digits, '-',
 * '_', '.', not beginning with '.' or '-'. */
static bool name_ok(const char *s, size_t n)
{
    if (!n || n >= HUBREPO_NAME_MAX || s[0] == '.' || s[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("-_.", s[i]))
            return false;
    return !(n == 2 && !strncmp(s, "..", 2));
}

bool hubrepo_name(const char *arg, char org[HUBREPO_NAME_MAX], char repo[HUBREPO_NAME_MAX],
                  char tag[32])
{
    static const char *const prefixes[] = {"https://huggingface.co/", "huggingface.co/",
                                           "hf.co/", NULL};
    for (size_t i = 0; prefixes[i]; i++)
        if (!strncmp(arg, prefixes[i], strlen(prefixes[i]))) {
            arg += strlen(prefixes[i]);
            break;
        }
    const char *slash = strchr(arg, '/');
    if (!slash)
        return false;
    const char *r = slash + 1, *colon = strchr(r, ':');
    size_t rl = colon ? (size_t)(colon - r) : strlen(r);
    if (!name_ok(arg, (size_t)(slash - arg)) || !name_ok(r, rl) || memchr(r, '/', rl))
        return false;
    tag[0] = '\0';
    if (colon) {
        size_t tl = strlen(colon + 1);
        if (!tl || tl >= 32)
            return false;
        for (size_t i = 0; i < tl; i++)
            if (!isalnum((unsigned char)colon[1 + i]) && !strchr("-_.", colon[1 + i]))
                return false;
        memcpy(tag, colon + 1, tl + 1);
    }
    snprintf(org, HUBREPO_NAME_MAX, "%.*s", (int)(slash - arg), arg);
    snprintf(repo, HUBREPO_NAME_MAX, "%.*s", (int)rl, r);
    return true;
}

/* A path of the listing that is named after locally: one or two plain
 * names ("x.gguf", "Q8_0/x.gguf"), none hidden, none "..". */
static bool path_ok(const char *p)
{
    size_t n = strlen(p);
    if (!n || n >= sizeof((struct hubrepo_file *)0)->path)
        return false;
    int slashes = 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c == '/') {
            if (++slashes > 1 || i == 0 || p[i - 1] == '/' || i + 1 == n)
                return false;
            continue;
        }
        if ((i == 0 || p[i - 1] == '/') && c == '.')
            return false;
        if (!isalnum((unsigned char)c) && !strchr("-_.+=", c))
            return false;
    }
    return true;
}

int hubrepo_parse(const char *text, size_t n, struct hubrepo *h, char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    json_error_t je;
    json_t *a = n <= HUBREPO_MAX_TREE ? json_loadb(text, n, JSON_REJECT_DUPLICATES, &je) : NULL;
    if (!json_is_array(a)) {
        snprintf(err, errlen, "the hub's list of the repository's files is not what its API "
                              "gives (a JSON array of files)");
        json_decref(a);
        return -1;
    }
    size_t cap = json_array_size(a) < HUBREPO_MAX_FILES ? json_array_size(a) : HUBREPO_MAX_FILES;
    h->files = calloc(cap ? cap : 1, sizeof *h->files);
    if (!h->files) {
        json_decref(a);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e) {
        const char *type = json_string_value(json_object_get(e, "type"));
        const char *path = json_string_value(json_object_get(e, "path"));
        json_t *size = json_object_get(e, "size"), *lfs = json_object_get(e, "lfs");
        const char *oid = json_string_value(json_object_get(lfs, "oid"));
        if (!oid)
            oid = json_string_value(json_object_get(e, "oid"));
        if (!type || strcmp(type, "file") || !path || !path_ok(path) || !json_is_integer(size) ||
            json_integer_value(size) < 0 || h->n == cap) {
            h->skipped++;
            continue;
        }
        struct hubrepo_file *f = &h->files[h->n++];
        snprintf(f->path, sizeof f->path, "%s", path);
        f->size = (uint64_t)json_integer_value(size);
        snprintf(f->oid, sizeof f->oid, "%s", oid ? oid : "");
        for (char *c = f->oid; *c; c++) /* an id is hex: anything else is not kept */
            if (!isxdigit((unsigned char)*c)) {
                f->oid[0] = '\0';
                break;
            }
    }
    json_decref(a);
    return 0;
}

void hubrepo_free(struct hubrepo *h)
{
    free(h->files);
    memset(h, 0, sizeof *h);
}

static int find(const struct hubrepo *h, const char *path)
{
    for (size_t i = 0; i < h->n; i++)
        if (!strcmp(h->files[i].path, path))
            return (int)i;
    return -1;
}

static bool ends(const char *s, const char *suffix)
{
    size_t l = strlen(s), k = strlen(suffix);
    return l > k && !strcasecmp(s + l - k, suffix);
}

static int add(struct hubrepo_pick *p, size_t file, enum hubrepo_how how, uint64_t size)
{
    if (p->n == HUBREPO_MAX_PICK)
        return -1;
    p->file[p->n] = file;
    p->how[p->n++] = how;
    p->bytes += size;
    return 0;
}

/* The GGUF models of the listing, as a folder's ggufset. */
static void gguf_models(const struct hubrepo *h, struct ggufset *s)
{
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < h->n; i++) {
        const char *base = strrchr(h->files[i].path, '/');
        base = base ? base + 1 : h->files[i].path;
        struct ggufname g;
        if (!ggufname_is_model(base) || !ggufname_parse(base, &g))
            continue;
        if (s->n == GGUFSET_MAX) {
            s->more++;
            continue;
        }
        struct ggufset_file *f = &s->files[s->n++];
        snprintf(f->path, sizeof f->path, "%s", h->files[i].path);
        f->name = g;
        f->bytes = h->files[i].size;
        size_t stem = strlen(f->path) - 20; /* "-00001-of-00003.gguf" */
        for (unsigned k = 2; g.parts > 1 && k <= g.parts; k++) {
            char part[300];
            snprintf(part, sizeof part, "%.*s-%05u-of-%05u.gguf", (int)stem, f->path, k, g.parts);
            int j = find(h, part);
            f->bytes += j >= 0 ? h->files[j].size : 0;
        }
    }
    for (size_t i = 0; i < s->n; i++) {
        s->files[i].tag_unique = s->files[i].name.quant[0] != '\0';
        for (size_t j = 0; j < s->n && s->files[i].tag_unique; j++)
            if (j != i && !strcmp(s->files[i].name.quant, s->files[j].name.quant))
                s->files[i].tag_unique = false;
    }
}

static int pick_gguf(const struct hubrepo *h, const char *repo, const struct ggufset *s,
                     const char *tag, struct hubrepo_pick *p, char *err, size_t errlen)
{
    int k = tag && *tag ? ggufset_pick(s, tag) : s->n == 1 ? 0 : ggufset_pick(s, "Q4_K_M");
    if (k < 0) {
        char list[1200];
        ggufset_describe(s, repo, "", list, sizeof list);
        snprintf(err, errlen, "%s: %s: name one by its quantization (REPO:QUANT): %s",
                 tag && *tag ? tag : "several GGUF models and no Q4_K_M",
                 k == -2 ? "more than one file answers to it" : "no such GGUF here", list);
        return -1;
    }
    const struct ggufset_file *f = &s->files[k];
    snprintf(p->quant, sizeof p->quant, "%s", f->name.quant);
    size_t stem = strlen(f->path) - 20;
    for (unsigned part = 1; part <= f->name.parts; part++) {
        char name[300];
        if (f->name.parts > 1)
            snprintf(name, sizeof name, "%.*s-%05u-of-%05u.gguf", (int)stem, f->path, part,
                     f->name.parts);
        else
            snprintf(name, sizeof name, "%s", f->path);
        int j = find(h, name);
        if (j < 0) {
            snprintf(err, errlen, "%s: part %u of %u is not in the repository", f->path, part,
                     f->name.parts);
            return -1;
        }
        if (add(p, (size_t)j, HUBREPO_GGUF, h->files[j].size) < 0) {
            snprintf(err, errlen, "%s: more than %d parts", f->path, HUBREPO_MAX_PICK);
            return -1;
        }
    }
    return 0;
}

int hubrepo_pick(const struct hubrepo *h, const char *repo, const char *tag,
                 struct hubrepo_pick *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    struct ggufset *s = malloc(sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    gguf_models(h, s);
    int rc = 0;
    if (s->n) {
        rc = pick_gguf(h, repo, s, tag, p, err, errlen);
    } else if (tag && *tag) {
        snprintf(err, errlen, "%s: the repository has no GGUF files (its safetensors are one "
                              "model: name it without a quantization)",
                 tag);
        rc = -1;
    } else {
        /* the top folder's shards, their index, config.json */
        for (size_t i = 0; i < h->n && rc == 0; i++) {
            const char *path = h->files[i].path;
            if (strchr(path, '/'))
                continue;
            if (!strcmp(path, "config.json") || !strcmp(path, "model.safetensors.index.json"))
                rc = add(p, i, HUBREPO_WHOLE, 0);
            else if (ends(path, ".safetensors"))
                rc = add(p, i, HUBREPO_SAFETENSORS, h->files[i].size);
        }
        if (rc < 0)
            snprintf(err, errlen, "more than %d files to read", HUBREPO_MAX_PICK);
        else if (!p->n) {
            snprintf(err, errlen, "no GGUF, safetensors or config.json in the repository: "
                                  "nothing vram reads");
            rc = -1;
        }
    }
    free(s);
    return rc;
}
