/* safetensors: the header of .safetensors files.
 *
 * The format: an 8-byte little-endian length N (at most 100 MiB, the
 * format's own limit), N bytes of JSON mapping each tensor name to {"dtype",
 * "shape", "data_offsets": [begin, end]}, then the data. Only the header is
 * read, as a stream (model/jscan.c): a hostile header costs its reading time
 * and constant memory, never a copy of itself. Shapes are multiplied with
 * overflow checks, every data range is checked against the file, and the
 * ranges may not add up to more than the data (the format leaves no holes,
 * so tensors that overlap, or a name given twice, show as more). */
#include "model/safetensors.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/units.h"
#include "model/hfconfig.h"
#include "model/jscan.h"

static const struct {
    const char *name;
    unsigned bits;
} dtypes[] = {
    {"F64", 64}, {"F32", 32},    {"F16", 16},    {"BF16", 16}, {"I64", 64}, {"I32", 32},
    {"I16", 16}, {"I8", 8},      {"U8", 8},      {"U16", 16},  {"U32", 32}, {"U64", 64},
    {"BOOL", 8}, {"F8_E4M3", 8}, {"F8_E5M2", 8}, {"F4", 4},
};

static int dtype_index(const struct jscan *j)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (jscan_is(j, dtypes[i].name))
            return (int)i;
    return -1;
}

__attribute__((format(printf, 4, 5))) static int bad(char *err, size_t errlen, const char *name,
                                                     const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(err, errlen, "%s: %s", name, what);
    return VRAM_EINPUT;
}

static int not_json(const struct jscan *j, const char *name, char *err, size_t errlen)
{
    return bad(err, errlen, name, "header is not valid JSON (%s)", j->err);
}

static void note_layer(struct safetensors_summary *s, const char *key)
{
    const char *p = strstr(key, "layers.");
    if (!p)
        p = strstr(key, "blocks.");
    if (!p)
        return;
    unsigned long n = strtoul(p + 7, NULL, 10);
    if (n < 100000 && n + 1 > s->max_layer)
        s->max_layer = (unsigned)n + 1;
}

struct tensor {
    int dtype; /* -1 until read */
    bool has_shape, bad_dim, overflow, has_offsets, offsets_ok;
    uint64_t numel, dims[2];
    unsigned ndims;
    int64_t begin, end;
};

/* [n, ...] of whole non-negative numbers, after its '[' was read. */
static enum jscan_tok shape(struct jscan *j, struct tensor *t)
{
    enum jscan_tok k;
    t->numel = 1;
    while ((k = jscan_next(j)) != JSCAN_ARR_END && k != JSCAN_ERR) {
        if (t->ndims == 16) { /* one too many: the rest is not read */
            t->ndims++;
            return jscan_finish(j, JSCAN_ARR) == JSCAN_ERR ? JSCAN_ERR : JSCAN_ARR_END;
        }
        if (k != JSCAN_NUM || !j->whole || j->num < 0) {
            t->bad_dim = true;
            if (jscan_finish(j, k) == JSCAN_ERR)
                return JSCAN_ERR;
        } else {
            if (t->ndims < 2)
                t->dims[t->ndims] = (uint64_t)j->num;
            if (__builtin_mul_overflow(t->numel, (uint64_t)j->num, &t->numel))
                t->overflow = true;
        }
        t->ndims++;
    }
    return k;
}

static enum jscan_tok offsets(struct jscan *j, struct tensor *t)
{
    enum jscan_tok k;
    int n = 0;
    t->offsets_ok = true;
    while ((k = jscan_next(j)) != JSCAN_ARR_END && k != JSCAN_ERR) {
        if (n == 2) { /* one too many: the rest is not read */
            t->offsets_ok = false;
            return jscan_finish(j, JSCAN_ARR) == JSCAN_ERR ? JSCAN_ERR : JSCAN_ARR_END;
        }
        if (k == JSCAN_OBJ || k == JSCAN_ARR) {
            if (jscan_finish(j, k) == JSCAN_ERR)
                return JSCAN_ERR;
            t->offsets_ok = false;
        } else if (k != JSCAN_NUM || !j->whole || n >= 2) {
            t->offsets_ok = false;
        } else {
            (n ? &t->end : &t->begin)[0] = j->num;
        }
        n++;
    }
    if (n != 2)
        t->offsets_ok = false;
    return k;
}

/* One tensor's object, its name in key, after the name was read. */
static int tensor(struct jscan *j, const char *key, uint64_t data_size, const char *name,
                  struct safetensors_summary *s, uint64_t *file_bytes, char *err, size_t errlen)
{
    enum jscan_tok k = jscan_next(j);
    if (k == JSCAN_ERR)
        return not_json(j, name, err, errlen);
    if (k != JSCAN_OBJ) {
        if (jscan_finish(j, k) == JSCAN_ERR)
            return not_json(j, name, err, errlen);
        return bad(err, errlen, name, "tensor '%s' is not an object", key);
    }
    struct tensor t = {.dtype = -1};
    char dt[32] = "(none)";
    while ((k = jscan_next(j)) == JSCAN_KEY) {
        /* which member, before its value overwrites the key */
        int member = jscan_is(j, "dtype") ? 1 : jscan_is(j, "shape") ? 2
                     : jscan_is(j, "data_offsets")                    ? 3
                                                                      : 0;
        k = jscan_next(j);
        if (member == 1 && k == JSCAN_STRING) {
            t.dtype = dtype_index(j);
            size_t l = j->len < sizeof dt - 1 ? j->len : sizeof dt - 1;
            memcpy(dt, j->str, l); /* for a message, if any */
            dt[l] = '\0';
        } else if (member == 2 && k == JSCAN_ARR) {
            t.has_shape = true;
            k = shape(j, &t);
        } else if (member == 3 && k == JSCAN_ARR) {
            t.has_offsets = true;
            k = offsets(j, &t);
        } else {
            k = jscan_finish(j, k);
        }
        if (k == JSCAN_ERR)
            return not_json(j, name, err, errlen);
    }
    if (k == JSCAN_ERR)
        return not_json(j, name, err, errlen);
    if (t.dtype < 0)
        return bad(err, errlen, name, "tensor '%s': unknown dtype '%s'", key, dt);
    if (!t.has_shape || t.ndims > 16)
        return bad(err, errlen, name, "tensor '%s': shape is not an array of at most 16 sizes",
                   key);
    if (t.bad_dim)
        return bad(err, errlen, name, "tensor '%s': a dimension is not a size", key);
    uint64_t bytes;
    if (t.overflow)
        return bad(err, errlen, name, "tensor '%s': its shape overflows 64 bits", key);
    if (__builtin_mul_overflow(t.numel, (uint64_t)dtypes[t.dtype].bits, &bytes))
        return bad(err, errlen, name, "tensor '%s': its size overflows 64 bits", key);
    bytes = (bytes + 7) / 8;
    if (!t.has_offsets || !t.offsets_ok)
        return bad(err, errlen, name, "tensor '%s': data_offsets is not [begin, end]", key);
    if (t.begin < 0 || t.end < t.begin || (uint64_t)t.end > data_size) {
        char b1[32], b2[32];
        return bad(err, errlen, name, "tensor '%s' extends past the end of the file (end %s, data %s)",
                   key, units_fmt_size(t.end < 0 ? 0 : (uint64_t)t.end, b1, sizeof b1),
                   units_fmt_size(data_size, b2, sizeof b2));
    }
    if ((uint64_t)(t.end - t.begin) != bytes)
        return bad(err, errlen, name,
                   "tensor '%s': its data range does not match its shape (%llu bytes for %llu "
                   "of %s)",
                   key, (unsigned long long)(t.end - t.begin), (unsigned long long)t.numel, dt);
    s->tensors++;
    s->params += t.numel;
    s->bytes += bytes;
    s->bytes_by_dtype[t.dtype] += bytes;
    *file_bytes += bytes;
    note_layer(s, key);
    if (t.ndims == 2 && (strstr(key, "embed_tokens.weight") || strstr(key, "wte.weight"))) {
        s->embed_rows = t.dims[0];
        s->embed_cols = t.dims[1];
    }
    return VRAM_OK;
}

int safetensors_parse(struct reader *r, const char *name, struct safetensors_summary *s, char *err,
                      size_t errlen)
{
    return safetensors_parse_max(r, name, SAFETENSORS_MAX_HEADER, s, err, errlen);
}

int safetensors_parse_max(struct reader *r, const char *name, uint64_t max_header,
                          struct safetensors_summary *s, char *err, size_t errlen)
{
    unsigned char lenb[8];
    if (reader_read(r, lenb, 8) < 0) {
        snprintf(err, errlen, "%s: too short for a safetensors file (%llu bytes)", name,
                 (unsigned long long)r->size);
        return VRAM_EINPUT;
    }
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | lenb[i];
    if (n == 0 || n > reader_left(r) || n > max_header) {
        char b1[32], b2[32], b3[32];
        snprintf(err, errlen,
                 "%s: header length %s is impossible (the file has %s after it; the format "
                 "allows %s)",
                 name, units_fmt_size(n, b1, sizeof b1),
                 units_fmt_size(reader_left(r), b2, sizeof b2),
                 units_fmt_size(max_header, b3, sizeof b3));
        return VRAM_EINPUT;
    }
    s->header_bytes += n;
    uint64_t size = r->size, data_size = r->size - r->pos - n;
    r->size = r->pos + n; /* the scanner reads the header and nothing after */
    struct jscan *j = malloc(sizeof *j);
    if (!j) {
        r->size = size;
        return VRAM_EFAIL;
    }
    jscan_init(j, r);
    int rc = VRAM_OK;
    uint64_t file_bytes = 0;
    enum jscan_tok k = jscan_next(j);
    if (k != JSCAN_OBJ)
        rc = k == JSCAN_ERR ? not_json(j, name, err, errlen)
                            : bad(err, errlen, name, "header is not a JSON object");
    while (rc == VRAM_OK && (k = jscan_next(j)) == JSCAN_KEY) {
        char key[JSCAN_STR];
        memcpy(key, j->str, (j->len < JSCAN_STR ? j->len : JSCAN_STR - 1) + 1);
        if (jscan_is(j, "__metadata__"))
            rc = jscan_skip(j) == JSCAN_ERR ? not_json(j, name, err, errlen) : VRAM_OK;
        else
            rc = tensor(j, key, data_size, name, s, &file_bytes, err, errlen);
    }
    if (rc == VRAM_OK && (k != JSCAN_OBJ_END || (k = jscan_next(j)) != JSCAN_EOF))
        rc = not_json(j, name, err, errlen);
    if (rc == VRAM_OK && file_bytes > data_size) {
        char b1[32], b2[32];
        rc = bad(err, errlen, name,
                 "its tensors add up to %s but its data holds %s: they overlap, or a name is "
                 "given twice",
                 units_fmt_size(file_bytes, b1, sizeof b1), units_fmt_size(data_size, b2, sizeof b2));
    }
    free(j);
    r->size = size;
    return rc;
}

/* The shards of a folder, each parsed once. */
struct shards {
    struct safetensors_summary *s;
    char (*names)[256];
    size_t n;
    struct {
        dev_t dev;
        ino_t ino;
    } seen[SAFETENSORS_MAX_SHARDS];
    size_t nseen;
    char *err;
    size_t errlen;
};

static int add_shard(struct shards *sh, const char *name, const char *from)
{
    for (size_t i = 0; i < sh->n; i++)
        if (!strcmp(sh->names[i], name))
            return VRAM_OK;
    if (sh->n == SAFETENSORS_MAX_SHARDS) {
        snprintf(sh->err, sh->errlen, "%s: more than %d shards", from, SAFETENSORS_MAX_SHARDS);
        return VRAM_EINPUT;
    }
    snprintf(sh->names[sh->n++], sizeof sh->names[0], "%s", name);
    return VRAM_OK;
}

static int parse_shard(struct reader *r, const char *name, void *arg)
{
    struct shards *sh = arg;
    for (size_t i = 0; i < sh->nseen; i++)
        if (sh->seen[i].dev == r->dev && sh->seen[i].ino == r->ino) {
            snprintf(sh->err, sh->errlen, "%s: the same file as another shard", name);
            return VRAM_EINPUT;
        }
    sh->seen[sh->nseen].dev = r->dev;
    sh->seen[sh->nseen++].ino = r->ino;
    int rc = safetensors_parse(r, name, sh->s, sh->err, sh->errlen);
    if (rc == VRAM_OK && sh->s->header_bytes > SAFETENSORS_MAX_HEADERS) {
        char b[32];
        snprintf(sh->err, sh->errlen,
                 "%s: the shards' headers add up to more than %s (real ones: a few MiB)", name,
                 units_fmt_size(SAFETENSORS_MAX_HEADERS, b, sizeof b));
        rc = VRAM_EINPUT;
    }
    return rc;
}

/* model.safetensors.index.json: the names its weight_map gives. */
static int parse_index(struct reader *r, const char *name, void *arg)
{
    struct shards *sh = arg;
    if (reader_left(r) > SAFETENSORS_MAX_INDEX) {
        char b1[32], b2[32];
        snprintf(sh->err, sh->errlen, "%s: %s is too big for an index (vram reads up to %s)", name,
                 units_fmt_size(reader_left(r), b1, sizeof b1),
                 units_fmt_size(SAFETENSORS_MAX_INDEX, b2, sizeof b2));
        return VRAM_EINPUT;
    }
    struct jscan *j = malloc(sizeof *j);
    if (!j)
        return VRAM_EFAIL;
    jscan_init(j, r);
    int rc = VRAM_OK;
    bool map = false;
    enum jscan_tok k = jscan_next(j);
    if (k != JSCAN_OBJ)
        k = JSCAN_ERR;
    while (rc == VRAM_OK && k != JSCAN_ERR && (k = jscan_next(j)) == JSCAN_KEY) {
        if (!jscan_is(j, "weight_map")) {
            k = jscan_skip(j);
            continue;
        }
        if ((k = jscan_next(j)) != JSCAN_OBJ) {
            k = jscan_finish(j, k);
            continue;
        }
        map = true;
        while (rc == VRAM_OK && (k = jscan_next(j)) == JSCAN_KEY) {
            char key[JSCAN_STR];
            snprintf(key, sizeof key, "%s", j->str);
            if ((k = jscan_next(j)) != JSCAN_STRING || j->cut || !j->str[0] ||
                strchr(j->str, '/') || !strcmp(j->str, "..") || !strcmp(j->str, ".") ||
                j->len > 255) {
                if (k == JSCAN_ERR)
                    break;
                snprintf(sh->err, sh->errlen, "%s: tensor '%s' names a shard outside the folder",
                         name, key);
                rc = VRAM_EINPUT;
                break;
            }
            rc = add_shard(sh, j->str, name);
        }
        if (rc == VRAM_OK && k == JSCAN_OBJ_END)
            k = JSCAN_KEY; /* the map is closed: on to the next member */
    }
    if (rc == VRAM_OK && k == JSCAN_OBJ_END && jscan_next(j) != JSCAN_EOF)
        k = JSCAN_ERR;
    if (rc == VRAM_OK && k == JSCAN_ERR) {
        snprintf(sh->err, sh->errlen, "%s: not valid JSON (%s)", name,
                 j->err[0] ? j->err : "the top level is not an object");
        rc = VRAM_EINPUT;
    } else if (rc == VRAM_OK && !map) {
        snprintf(sh->err, sh->errlen, "%s: no \"weight_map\" object", name);
        rc = VRAM_EINPUT;
    }
    free(j);
    return rc;
}

static int list_shard(const char *name, void *arg)
{
    size_t l = strlen(name);
    if (l <= 12 || strcmp(name + l - 12, ".safetensors") != 0 || l > 255)
        return 0;
    struct shards *sh = arg;
    return add_shard(sh, name, "the folder");
}

static int read_shards(const struct modeldir *d, const char *file, struct shards *sh)
{
    int rc;
    if (file)
        rc = add_shard(sh, file, d->shown);
    else if (modeldir_has(d, "model.safetensors.index.json"))
        rc = modeldir_parse(d, "model.safetensors.index.json", parse_index, sh, sh->err,
                            sh->errlen);
    else
        rc = modeldir_each(d, list_shard, sh, sh->err, sh->errlen);
    for (size_t i = 0; rc == VRAM_OK && i < sh->n; i++)
        rc = modeldir_parse(d, sh->names[i], parse_shard, sh, sh->err, sh->errlen);
    return rc;
}

struct cfg_job {
    struct model_info *m;
    char *err;
    size_t errlen;
};

static int parse_cfg(struct reader *r, const char *name, void *arg)
{
    struct cfg_job *c = arg;
    return hfconfig_parse(r, name, HFCONFIG_MAX, c->m, c->err, c->errlen);
}

int safetensors_load(const struct modeldir *d, const char *file, struct model_info *m, char *err,
                     size_t errlen)
{
    struct safetensors_summary s;
    memset(&s, 0, sizeof s);
    struct shards *sh = calloc(1, sizeof *sh);
    char(*names)[256] = calloc(SAFETENSORS_MAX_SHARDS, sizeof *names);
    if (!sh || !names) {
        free(sh);
        free(names);
        return VRAM_EFAIL;
    }
    sh->s = &s;
    sh->names = names;
    sh->err = err;
    sh->errlen = errlen;
    int rc = read_shards(d, file, sh);
    free(names);
    free(sh);
    if (rc != VRAM_OK)
        return rc;
    if (!s.tensors) {
        snprintf(err, errlen, "%s%s%s: no tensors in %s", d->shown, d->shown[0] && file ? "/" : "",
                 file ? file : "", file ? "its header" : "its shards' headers");
        return VRAM_EINPUT;
    }
    /* the shape from config.json when it is there; the counts from the
     * weights, which are the truth */
    struct cfg_job c = {m, err, errlen};
    if (modeldir_has(d, "config.json") &&
        (rc = modeldir_parse(d, "config.json", parse_cfg, &c, err, errlen)) != VRAM_OK)
        return rc;
    if (!m->layers)
        m->layers = s.max_layer;
    if (!m->vocab)
        m->vocab = (unsigned)s.embed_rows;
    if (!m->hidden)
        m->hidden = (unsigned)s.embed_cols;
    if (s.params) {
        m->params = s.params;
        if (!m->experts)
            m->params_active = s.params;
    }
    m->weight_bytes = s.bytes;
    m->stored_bits = s.params ? 8.0 * (double)s.bytes / (double)s.params : 0;
    int top = 0;
    for (int i = 1; i < 16; i++)
        if (s.bytes_by_dtype[i] > s.bytes_by_dtype[top])
            top = i;
    static const char *const names16[] = {"fp64", "fp32", "fp16", "bf16", "i64", "i32",
                                          "i16",  "int8", "u8",   "u16",  "u32", "u64",
                                          "bool", "fp8",  "fp8",  "fp4"};
    snprintf(m->stored, sizeof m->stored, "%s", s.tensors ? names16[top] : "empty");
    return VRAM_OK;
}
