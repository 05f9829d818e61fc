/* safetensors: the header of .safetensors files.
 *
 * The format: an 8-byte little-endian length N, N bytes of JSON mapping each
 * tensor name to {"dtype", "shape", "data_offsets": [begin, end]}, then the
 * data. Only the header is read. A hostile header cannot make us allocate
 * more than the file holds (N is checked against the file size first), nor
 * overflow a size (shapes are multiplied with overflow checks), nor point
 * outside the file (every data range is checked). */
#include "model/safetensors.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/units.h"
#include "model/hfconfig.h"

#define MAX_HEADER (100ULL << 20) /* the format's own limit */

static const struct {
    const char *name;
    unsigned bits;
} dtypes[] = {
    {"F64", 64}, {"F32", 32},    {"F16", 16},    {"BF16", 16}, {"I64", 64}, {"I32", 32},
    {"I16", 16}, {"I8", 8},      {"U8", 8},      {"U16", 16},  {"U32", 32}, {"U64", 64},
    {"BOOL", 8}, {"F8_E4M3", 8}, {"F8_E5M2", 8}, {"F4", 4},
};

static int dtype_index(const char *s)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (!strcmp(s, dtypes[i].name))
            return (int)i;
    return -1;
}

__attribute__((format(printf, 4, 5))) static int bad(char *err, size_t errlen, const char *name,
                                                     const char *fmt, ...)
{
    char what[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(err, errlen, "%s: %s", name, what);
    return VRAM_EINPUT;
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

static int tensor(json_t *t, const char *key, uint64_t data_size, const char *name,
                  struct safetensors_summary *s, char *err, size_t errlen)
{
    if (!json_is_object(t))
        return bad(err, errlen, name, "tensor '%s' is not an object", key);
    const char *dt = json_string_value(json_object_get(t, "dtype"));
    int di = dt ? dtype_index(dt) : -1;
    if (di < 0)
        return bad(err, errlen, name, "tensor '%s': unknown dtype '%s'", key, dt ? dt : "(none)");
    json_t *shape = json_object_get(t, "shape"), *off = json_object_get(t, "data_offsets");
    if (!json_is_array(shape) || json_array_size(shape) > 16)
        return bad(err, errlen, name, "tensor '%s': shape is not an array of at most 16 sizes",
                   key);
    uint64_t numel = 1;
    size_t i;
    json_t *d;
    json_array_foreach(shape, i, d)
    {
        if (!json_is_integer(d) || json_integer_value(d) < 0)
            return bad(err, errlen, name, "tensor '%s': a dimension is not a size", key);
        if (__builtin_mul_overflow(numel, (uint64_t)json_integer_value(d), &numel))
            return bad(err, errlen, name, "tensor '%s': its shape overflows 64 bits", key);
    }
    uint64_t bytes;
    if (__builtin_mul_overflow(numel, (uint64_t)dtypes[di].bits, &bytes))
        return bad(err, errlen, name, "tensor '%s': its size overflows 64 bits", key);
    bytes = (bytes + 7) / 8;
    if (!json_is_array(off) || json_array_size(off) != 2 ||
        !json_is_integer(json_array_get(off, 0)) || !json_is_integer(json_array_get(off, 1)))
        return bad(err, errlen, name, "tensor '%s': data_offsets is not [begin, end]", key);
    json_int_t b = json_integer_value(json_array_get(off, 0));
    json_int_t e = json_integer_value(json_array_get(off, 1));
    char detail[96];
    if (b < 0 || e < b || (uint64_t)e > data_size) {
        char b1[32], b2[32];
        snprintf(detail, sizeof detail, "(end %s, data %s)",
                 units_fmt_size(e < 0 ? 0 : (uint64_t)e, b1, sizeof b1),
                 units_fmt_size(data_size, b2, sizeof b2));
        return bad(err, errlen, name, "tensor '%s' extends past the end of the file %s", key,
                   detail);
    }
    if ((uint64_t)(e - b) != bytes) {
        snprintf(detail, sizeof detail, "(%llu bytes for %llu of %s)", (unsigned long long)(e - b),
                 (unsigned long long)numel, dt);
        return bad(err, errlen, name, "tensor '%s': its data range does not match its shape %s",
                   key, detail);
    }
    s->tensors++;
    s->params += numel;
    s->bytes += bytes;
    s->bytes_by_dtype[di] += bytes;
    note_layer(s, key);
    if (strstr(key, "embed_tokens.weight") || strstr(key, "wte.weight")) {
        s->embed_rows = json_array_size(shape) == 2
                            ? (uint64_t)json_integer_value(json_array_get(shape, 0))
                            : 0;
        s->embed_cols = json_array_size(shape) == 2
                            ? (uint64_t)json_integer_value(json_array_get(shape, 1))
                            : 0;
    }
    return VRAM_OK;
}

int safetensors_parse(struct reader *r, const char *name, struct safetensors_summary *s, char *err,
                      size_t errlen)
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
    if (n == 0 || n > reader_left(r) || n > MAX_HEADER) {
        char b1[32], b2[32];
        snprintf(err, errlen,
                 "%s: header length %s is impossible (the file has %s after it; the format "
                 "allows 100 MiB)",
                 name, units_fmt_size(n, b1, sizeof b1),
                 units_fmt_size(reader_left(r), b2, sizeof b2));
        return VRAM_EINPUT;
    }
    char *text = malloc(n);
    if (!text)
        return VRAM_EFAIL;
    if (reader_read(r, text, n) < 0) {
        free(text);
        snprintf(err, errlen, "%s: cannot read the header", name);
        return VRAM_EINPUT;
    }
    json_error_t je;
    json_t *root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!root) {
        snprintf(err, errlen, "%s: header is not valid JSON (column %d: %s)", name, je.column,
                 je.text);
        return VRAM_EINPUT;
    }
    int rc = VRAM_OK;
    if (!json_is_object(root)) {
        snprintf(err, errlen, "%s: header is not a JSON object", name);
        rc = VRAM_EINPUT;
    }
    const char *key;
    json_t *t;
    uint64_t data_size = reader_left(r);
    json_object_foreach(root, key, t)
    {
        if (rc != VRAM_OK || !strcmp(key, "__metadata__"))
            continue;
        rc = tensor(t, key, data_size, name, s, err, errlen);
    }
    json_decref(root);
    return rc;
}

struct safetensors_job {
    struct safetensors_summary *s;
    char *err;
    size_t errlen;
};

static int parse_job(struct reader *r, const char *name, void *arg)
{
    struct safetensors_job *j = arg;
    return safetensors_parse(r, name, j->s, j->err, j->errlen);
}

static int parse_file(const char *path, struct safetensors_summary *s, char *err, size_t errlen)
{
    struct safetensors_job j = {s, err, errlen};
    return reader_parse_file(path, parse_job, &j, err, errlen);
}

/* The shards an index names, each parsed once. */
static int parse_index(const char *dir, const char *index, struct safetensors_summary *s, char *err,
                       size_t errlen)
{
    json_error_t je;
    json_t *root = json_load_file(index, 0, &je);
    if (!root) {
        snprintf(err, errlen, "%s:%d:%d: %s", index, je.line, je.column, je.text);
        return VRAM_EINPUT;
    }
    json_t *map = json_object_get(root, "weight_map");
    int rc = VRAM_OK;
    if (!json_is_object(map)) {
        snprintf(err, errlen, "%s: no \"weight_map\" object", index);
        rc = VRAM_EINPUT;
    }
    json_t *seen = json_object();
    const char *key;
    json_t *v;
    json_object_foreach(map, key, v)
    {
        const char *shard = json_string_value(v);
        if (rc != VRAM_OK)
            break;
        if (!shard || strchr(shard, '/') || !strcmp(shard, "..") || !*shard) {
            snprintf(err, errlen, "%s: tensor '%s' names a shard outside the folder", index, key);
            rc = VRAM_EINPUT;
            break;
        }
        if (json_object_get(seen, shard))
            continue;
        json_object_set_new(seen, shard, json_true());
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, shard);
        rc = parse_file(path, s, err, errlen);
    }
    json_decref(seen);
    json_decref(root);
    return rc;
}

static int parse_dir(const char *dir, struct safetensors_summary *s, char *err, size_t errlen)
{
    char index[4096];
    snprintf(index, sizeof index, "%s/model.safetensors.index.json", dir);
    if (access(index, R_OK) == 0)
        return parse_index(dir, index, s, err, errlen);
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return VRAM_EINPUT;
    }
    struct dirent *e;
    int rc = VRAM_OK;
    while (rc == VRAM_OK && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 12 || strcmp(e->d_name + l - 12, ".safetensors") != 0)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        rc = parse_file(path, s, err, errlen);
    }
    closedir(d);
    return rc;
}

int safetensors_load(const char *path, struct model_info *m, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return VRAM_EINPUT;
    }
    struct safetensors_summary s;
    memset(&s, 0, sizeof s);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    int rc;
    if (S_ISDIR(st.st_mode)) {
        rc = parse_dir(path, &s, err, errlen);
    } else {
        rc = parse_file(path, &s, err, errlen);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        else
            snprintf(dir, sizeof dir, ".");
    }
    if (rc != VRAM_OK)
        return rc;
    /* the shape from config.json when it is there; the counts from the
     * weights, which are the truth */
    char cfg[4200];
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    if (access(cfg, R_OK) == 0 && (rc = hfconfig_load(cfg, m, err, errlen)) != VRAM_OK)
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
    static const char *const names[] = {"fp64", "fp32", "fp16", "bf16", "i64", "i32",
                                        "i16",  "int8", "u8",   "u16",  "u32", "u64",
                                        "bool", "fp8",  "fp8",  "fp4"};
    snprintf(m->stored, sizeof m->stored, "%s", s.tensors ? names[top] : "empty");
    return VRAM_OK;
}
