/* gguf: the header of GGUF files.
 *
 * Layout: "GGUF", version (2 and 3 use 64-bit counts), tensor count, key
 * count; the key/value pairs (strings are a 64-bit length and bytes, arrays
 * a type, a count and elements); the tensor infos (name, dimensions, ggml
 * type, offset); then, at the alignment the metadata sets (32 by default),
 * the data. Every length is checked against what is left of the file before
 * it is used, so a hostile file gives an error, never a huge allocation or a
 * read past the end; and the header may not run past GGUF_MAX_HEADER, so a
 * hostile one costs a bounded time (real headers: under 32 MiB, most of it
 * the tokenizer's vocabulary and merges). */
#include "model/gguf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/units.h"

/* ggml's types: name, elements per block, bytes per block (ggml.c's
 * type_traits). Holes are types ggml has removed. */
static const struct {
    const char *name;
    uint32_t block, size;
} types[] = {
    [0] = {"f32", 1, 4},         [1] = {"f16", 1, 2},         [2] = {"q4_0", 32, 18},
    [3] = {"q4_1", 32, 20},      [6] = {"q5_0", 32, 22},      [7] = {"q5_1", 32, 24},
    [8] = {"q8_0", 32, 34},      [9] = {"q8_1", 32, 36},      [10] = {"q2_k", 256, 84},
    [11] = {"q3_k", 256, 110},   [12] = {"q4_k", 256, 144},   [13] = {"q5_k", 256, 176},
    [14] = {"q6_k", 256, 210},   [15] = {"q8_k", 256, 292},   [16] = {"iq2_xxs", 256, 66},
    [17] = {"iq2_xs", 256, 74},  [18] = {"iq3_xxs", 256, 98}, [19] = {"iq1_s", 256, 50},
    [20] = {"iq4_nl", 32, 18},   [21] = {"iq3_s", 256, 110},  [22] = {"iq2_s", 256, 82},
    [23] = {"iq4_xs", 256, 136}, [24] = {"i8", 1, 1},         [25] = {"i16", 1, 2},
    [26] = {"i32", 1, 4},        [27] = {"i64", 1, 8},        [28] = {"f64", 1, 8},
    [29] = {"iq1_m", 256, 56},   [30] = {"bf16", 1, 2},       [34] = {"tq1_0", 256, 54},
    [35] = {"tq2_0", 256, 66},   [39] = {"mxfp4", 32, 17},
};
#define NTYPES (sizeof types / sizeof types[0])

int64_t gguf_type_bytes(uint32_t t, uint64_t n)
{
    if (t >= NTYPES || !types[t].name || n % types[t].block)
        return -1;
    uint64_t blocks = n / types[t].block, bytes;
    if (__builtin_mul_overflow(blocks, types[t].size, &bytes) || bytes > INT64_MAX)
        return -1;
    return (int64_t)bytes;
}

const char *gguf_type_name(uint32_t t)
{
    return t < NTYPES && types[t].name ? types[t].name : "unknown";
}

enum { T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_F32, T_BOOL, T_STR, T_ARR, T_U64, T_I64, T_F64 };

static const unsigned scalar_size[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

struct gctx {
    uint64_t limit; /* the header may not go past this byte */
    struct reader *r;
    const char *name;
    char *err;
    size_t errlen;
    struct model_info *m;
    uint64_t alignment;
    unsigned vocab_from_tokens;
};

static int fail(struct gctx *g, const char *what)
{
    if (g->r->pos > g->limit)
        what = "its header runs past vram's limit (128 MiB): not a GGUF file vram reads (real "
               "headers are under 32 MiB)";
    snprintf(g->err, g->errlen, "%s: %s (at byte %llu of %llu)", g->name, what,
             (unsigned long long)g->r->pos, (unsigned long long)g->r->size);
    return VRAM_EINPUT;
}

static int u32(struct gctx *g, uint32_t *v)
{
    unsigned char b[4];
    if (reader_read(g->r, b, 4) < 0)
        return fail(g, "truncated");
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return 0;
}

static int u64(struct gctx *g, uint64_t *v)
{
    uint32_t lo, hi;
    if (u32(g, &lo) || u32(g, &hi))
        return VRAM_EINPUT;
    *v = (uint64_t)hi << 32 | lo;
    return 0;
}

/* A string: into buf (cut to len) when buf, else skipped. */
static int str(struct gctx *g, char *buf, size_t len)
{
    uint64_t n;
    if (u64(g, &n))
        return VRAM_EINPUT;
    if (n > reader_left(g->r))
        return fail(g, "a string is longer than the rest of the file");
    if (!buf)
        return reader_skip(g->r, n) < 0 ? fail(g, "truncated") : 0;
    uint64_t take = n < len - 1 ? n : len - 1;
    if (reader_read(g->r, buf, take) < 0 || reader_skip(g->r, n - take) < 0)
        return fail(g, "truncated");
    buf[take] = '\0';
    return 0;
}

/* A scalar value as an unsigned number (0 for floats, strings, bools). */
static int scalar(struct gctx *g, uint32_t type, uint64_t *out)
{
    if (type >= sizeof scalar_size / sizeof scalar_size[0] || scalar_size[type] == 0)
        return fail(g, "unknown metadata value type");
    unsigned char b[8] = {0};
    if (reader_read(g->r, b, scalar_size[type]) < 0)
        return fail(g, "truncated");
    uint64_t v = 0;
    for (int i = (int)scalar_size[type] - 1; i >= 0; i--)
        v = v << 8 | b[i];
    bool is_int = type != T_F32 && type != T_F64 && type != T_BOOL;
    bool negative = (type == T_I8 && (v & 0x80)) || (type == T_I16 && (v & 0x8000)) ||
                    (type == T_I32 && (v & 0x80000000u)) || (type == T_I64 && (v >> 63));
    *out = is_int && !negative ? v : 0;
    return 0;
}

static bool ends(const char *key, const char *suffix)
{
    size_t k = strlen(key), s = strlen(suffix);
    return k >= s && !strcmp(key + k - s, suffix);
}

/* llama.cpp's llama_ftype (general.file_type), named as llama-quantize
 * and Ollama name them; the numbers left out were removed from llama.cpp. */
static const char *const ftype_names[] = {
    [0] = "F32",     [1] = "F16",      [2] = "Q4_0",    [3] = "Q4_1",    [7] = "Q8_0",
    [8] = "Q5_0",    [9] = "Q5_1",     [10] = "Q2_K",   [11] = "Q3_K_S", [12] = "Q3_K_M",
    [13] = "Q3_K_L", [14] = "Q4_K_S",  [15] = "Q4_K_M", [16] = "Q5_K_S", [17] = "Q5_K_M",
    [18] = "Q6_K",   [19] = "IQ2_XXS", [20] = "IQ2_XS", [21] = "Q2_K_S", [22] = "IQ3_XS",
    [23] = "IQ3_XXS", [24] = "IQ1_S",  [25] = "IQ4_NL", [26] = "IQ3_S",  [27] = "IQ3_M",
    [28] = "IQ2_S",  [29] = "IQ2_M",   [30] = "IQ4_XS", [31] = "IQ1_M",  [32] = "BF16",
    [36] = "TQ1_0",  [37] = "TQ2_0",   [38] = "MXFP4",
};

const char *gguf_ftype_name(uint64_t t)
{
    return t < sizeof ftype_names / sizeof ftype_names[0] ? ftype_names[t] : NULL;
}

static void use(struct gctx *g, const char *key, uint64_t v)
{
    struct model_info *m = g->m;
    unsigned u = v > 100000000 ? 0 : (unsigned)v;
    if (!strcmp(key, "general.alignment"))
        g->alignment = v;
    else if (!strcmp(key, "general.file_type") && gguf_ftype_name(v))
        snprintf(m->quant, sizeof m->quant, "%s", gguf_ftype_name(v));
    else if (ends(key, ".block_count"))
        m->layers = u;
    else if (ends(key, ".embedding_length"))
        m->hidden = u;
    else if (ends(key, ".feed_forward_length"))
        m->ff = m->ff > u ? m->ff : u;
    else if (ends(key, ".expert_feed_forward_length"))
        m->ff = u;
    else if (ends(key, ".attention.head_count"))
        m->heads = m->heads > u ? m->heads : u;
    else if (ends(key, ".attention.head_count_kv"))
        m->kv_heads = m->kv_heads > u ? m->kv_heads : u;
    else if (ends(key, ".attention.key_length"))
        m->head_dim = u;
    else if (ends(key, ".context_length"))
        m->max_ctx = v;
    else if (ends(key, ".expert_count"))
        m->experts = u;
    else if (ends(key, ".expert_used_count"))
        m->experts_used = u;
    else if (ends(key, ".attention.sliding_window"))
        m->sliding_window = v;
    else if (ends(key, ".vocab_size"))
        m->vocab = u;
}

static int value(struct gctx *g, const char *key)
{
    uint32_t type;
    if (u32(g, &type))
        return VRAM_EINPUT;
    if (type == T_STR) {
        char buf[128];
        bool want = !strcmp(key, "general.architecture") || !strcmp(key, "general.name");
        if (str(g, want ? buf : NULL, sizeof buf))
            return VRAM_EINPUT;
        if (!strcmp(key, "general.architecture"))
            snprintf(g->m->arch, sizeof g->m->arch, "%s", buf);
        else if (want)
            snprintf(g->m->name, sizeof g->m->name, "%s", buf);
        return 0;
    }
    if (type == T_ARR) {
        uint32_t et;
        uint64_t n;
        if (u32(g, &et) || u64(g, &n))
            return VRAM_EINPUT;
        if (et == T_ARR)
            return fail(g, "nested arrays are not GGUF");
        if (et == T_STR) {
            if (n > reader_left(g->r) / 8)
                return fail(g, "an array claims more strings than the file can hold");
            if (g->r->pos > g->limit || n > (g->limit - g->r->pos) / 8) /* 8 bytes each at least */
                return fail(g, "an array of strings runs past the header's limit");
            if (!strcmp(key, "tokenizer.ggml.tokens"))
                g->vocab_from_tokens = n > 100000000 ? 0 : (unsigned)n;
            for (uint64_t i = 0; i < n; i++)
                if (str(g, NULL, 0))
                    return VRAM_EINPUT;
            return 0;
        }
        if (et >= sizeof scalar_size / sizeof scalar_size[0] || scalar_size[et] == 0)
            return fail(g, "unknown array element type");
        if (n > reader_left(g->r) / scalar_size[et])
            return fail(g, "an array is longer than the rest of the file");
        /* per-layer head counts: the largest is what sizes the cache */
        bool heads = ends(key, ".attention.head_count_kv") || ends(key, ".attention.head_count");
        if (!heads)
            return reader_skip(g->r, n * scalar_size[et]) < 0 ? fail(g, "truncated") : 0;
        if (n > 65536)
            return fail(g, "a per-layer array of head counts has more than 65536 entries");
        for (uint64_t i = 0; i < n; i++) {
            uint64_t v;
            if (scalar(g, et, &v))
                return VRAM_EINPUT;
            use(g, key, v);
        }
        return 0;
    }
    uint64_t v;
    if (scalar(g, type, &v))
        return VRAM_EINPUT;
    use(g, key, v);
    return 0;
}

/* Where a tensor's bytes go when llama.cpp places the model: the token
 * embedding stays in host memory, each blk.N. with layer N, the rest (output
 * head, final norm) with the output layer. */
static void place(struct model_info *m, const char *tname, uint64_t bytes, bool *has_output)
{
    if (!strcmp(tname, "token_embd.weight")) {
        m->embed_bytes += bytes;
    } else if (!strncmp(tname, "blk.", 4)) {
        char *end;
        unsigned long l = strtoul(tname + 4, &end, 10);
        if (*end == '.' && l < MODEL_MAX_LAYERS)
            m->layer_bytes[l] += bytes;
        else
            m->output_bytes += bytes; /* beyond the table: counted, not placed */
    } else {
        if (!strcmp(tname, "output.weight"))
            *has_output = true;
        m->output_bytes += bytes;
    }
}

int gguf_parse(struct reader *r, const char *name, struct model_info *m, char *err, size_t errlen)
{
    return gguf_parse_max(r, name, GGUF_MAX_HEADER, m, err, errlen);
}

int gguf_parse_max(struct reader *r, const char *name, uint64_t max_header, struct model_info *m,
                   char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    struct gctx g = {r->pos + max_header, r, name, err, errlen, m, 32, 0};
    unsigned char magic[4];
    if (reader_read(r, magic, 4) < 0 || memcmp(magic, "GGUF", 4) != 0)
        return fail(&g, "not a GGUF file (no \"GGUF\" at the start)");
    uint32_t version;
    uint64_t ntensors, nkv;
    if (u32(&g, &version))
        return VRAM_EINPUT;
    if (version != 2 && version != 3) {
        char msg[96];
        snprintf(msg, sizeof msg, "GGUF version %u; vram reads versions 2 and 3", version);
        return fail(&g, msg);
    }
    if (u64(&g, &ntensors) || u64(&g, &nkv))
        return VRAM_EINPUT;
    if (ntensors > reader_left(r) / 24 || nkv > reader_left(r) / 12)
        return fail(&g, "the header claims more entries than the file can hold");
    if (ntensors > max_header / 32 || nkv > max_header / 13)
        return fail(&g, "the header claims more entries than vram's limit (128 MiB) can hold");
    for (uint64_t i = 0; i < nkv; i++) {
        char key[256];
        if (str(&g, key, sizeof key) || value(&g, key))
            return VRAM_EINPUT;
        if (r->pos > g.limit)
            return fail(&g, "");
    }
    if (g.alignment == 0 || g.alignment > (1u << 20) || (g.alignment & (g.alignment - 1)))
        return fail(&g, "general.alignment is not a power of two up to 1 MiB");

    uint64_t params = 0, bytes = 0, by_type[NTYPES] = {0};
    uint64_t max_end = 0;
    bool has_output = false;
    char tname[256] = "";
    char worst[256] = "";
    for (uint64_t i = 0; i < ntensors; i++) {
        uint32_t ndims, type;
        if (str(&g, tname, sizeof tname) || u32(&g, &ndims))
            return VRAM_EINPUT;
        if (ndims == 0 || ndims > 8) {
            char msg[320];
            snprintf(msg, sizeof msg, "tensor '%s' has %u dimensions", tname, ndims);
            return fail(&g, msg);
        }
        uint64_t numel = 1;
        for (uint32_t d = 0; d < ndims; d++) {
            uint64_t n;
            if (u64(&g, &n))
                return VRAM_EINPUT;
            if (__builtin_mul_overflow(numel, n, &numel)) {
                char msg[320];
                snprintf(msg, sizeof msg, "tensor '%s': its shape overflows 64 bits", tname);
                return fail(&g, msg);
            }
        }
        uint64_t offset;
        if (u32(&g, &type) || u64(&g, &offset))
            return VRAM_EINPUT;
        int64_t b = gguf_type_bytes(type, numel);
        if (b < 0) {
            char msg[320];
            snprintf(msg, sizeof msg,
                     "tensor '%s': ggml type %u is unknown or its %llu elements "
                     "are not whole blocks",
                     tname, type, (unsigned long long)numel);
            return fail(&g, msg);
        }
        uint64_t end;
        if (__builtin_add_overflow(offset, (uint64_t)b, &end)) {
            char msg[320];
            snprintf(msg, sizeof msg, "tensor '%s': its offset overflows 64 bits", tname);
            return fail(&g, msg);
        }
        if (end > max_end) {
            max_end = end;
            snprintf(worst, sizeof worst, "%s", tname);
        }
        if (r->pos > g.limit)
            return fail(&g, "");
        params += numel;
        place(m, tname, (uint64_t)b, &has_output);
        if (__builtin_add_overflow(bytes, (uint64_t)b, &bytes))
            bytes = UINT64_MAX; /* caught below: more than any file holds */
        by_type[type] += (uint64_t)b;
    }
    uint64_t data = (r->pos + g.alignment - 1) & ~(g.alignment - 1);
    if (data > r->size || max_end > r->size - data) {
        char b1[32], b2[32], msg[400];
        snprintf(msg, sizeof msg,
                 "tensor '%s' extends past the end of the file (ends at %s, "
                 "file %s)",
                 worst, units_fmt_size(data + max_end, b1, sizeof b1),
                 units_fmt_size(r->size, b2, sizeof b2));
        snprintf(err, errlen, "%s: %s", name, msg);
        return VRAM_EINPUT;
    }
    if (bytes > r->size - data) { /* each inside the file, but on top of each other */
        char b1[32], b2[32], msg[400];
        snprintf(msg, sizeof msg,
                 "its tensors add up to %s but its data section holds %s: they overlap",
                 bytes == UINT64_MAX ? "more than 16 EiB" : units_fmt_size(bytes, b1, sizeof b1),
                 units_fmt_size(r->size - data, b2, sizeof b2));
        snprintf(err, errlen, "%s: %s", name, msg);
        return VRAM_EINPUT;
    }
    if (!m->vocab)
        m->vocab = g.vocab_from_tokens;
    m->tied_embeddings = !has_output;
    /* llama.cpp's sliding-window layouts: Gemma 2 every other layer, Gemma 3
     * five of six; other archs with a window use it in every layer */
    if (m->sliding_window && !strcmp(m->arch, "gemma2"))
        m->sliding_layers = m->layers / 2;
    else if (m->sliding_window && !strncmp(m->arch, "gemma3", 6))
        m->sliding_layers = m->layers - m->layers / 6;
    m->params = params;
    m->weight_bytes = bytes;
    m->stored_bits = params ? 8.0 * (double)bytes / (double)params : 0;
    uint32_t top = 0;
    for (uint32_t t = 1; t < NTYPES; t++)
        if (by_type[t] > by_type[top])
            top = t;
    snprintf(m->stored, sizeof m->stored, "%s", params ? gguf_type_name(top) : "empty");
    m->gguf = true;
    model_complete(m);
    if (m->experts && m->params) {
        uint64_t active = 0;
        model_count_params(m, &active);
        m->params_active = active;
    } else {
        m->params_active = m->params;
    }
    return VRAM_OK;
}

struct gguf_job {
    struct model_info *m;
    char *err;
    size_t errlen;
};

static int parse_job(struct reader *r, const char *name, void *arg)
{
    struct gguf_job *j = arg;
    return gguf_parse(r, name, j->m, j->err, j->errlen);
}

int gguf_load(const char *path, struct model_info *m, char *err, size_t errlen)
{
    struct gguf_job j = {m, err, errlen};
    return reader_parse_file(path, parse_job, &j, err, errlen);
}
