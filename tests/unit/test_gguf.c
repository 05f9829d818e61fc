/* GGUF: the architecture keys and the tensor table of files the test
 * writes, every ggml type's true size, and hostile files refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "core/err.h"
#include "model/gguf.h"
#include "fixture_model.h"

static struct mf f;
static char err[512];
static struct model_info m;

static int parse(void)
{
    struct reader *r = malloc(sizeof *r);
    reader_open_mem(r, f.buf, f.n);
    memset(&m, 0, sizeof m);
    int rc = gguf_parse(r, "t.gguf", &m, err, sizeof err);
    free(r);
    return rc;
}

static void pad_to(size_t align, size_t data)
{
    while (f.n % align)
        f.buf[f.n++] = 0;
    memset(f.buf + f.n, 0, data);
    f.n += data;
}

static void type_sizes(void **st)
{
    (void)st;
    /* bytes per 256 weights, from ggml's block layouts */
    static const struct {
        uint32_t type;
        int64_t bytes;
    } want[] = {
        {0, 1024}, {1, 512}, {30, 512}, {2, 144},  {3, 160},  {6, 176},  {7, 192},
        {8, 272},  {10, 84}, {11, 110}, {12, 144}, {13, 176}, {14, 210}, {15, 292},
        {16, 66},  {17, 74}, {18, 98},  {19, 50},  {20, 144}, {21, 110}, {22, 82},
        {23, 136}, {29, 56}, {34, 54},  {35, 66},  {39, 136}, {24, 256}, {28, 2048},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_int_equal(gguf_type_bytes(want[i].type, 256), want[i].bytes);
    assert_int_equal(gguf_type_bytes(4, 256), -1);  /* removed from ggml */
    assert_int_equal(gguf_type_bytes(12, 100), -1); /* not whole blocks */
    assert_int_equal(gguf_type_bytes(999, 256), -1);
    assert_string_equal(gguf_type_name(12), "q4_k");
}

static void reads_every_field(void **st)
{
    (void)st;
    f.n = 0;
    mf_gguf_header(&f, 3, 2, 10);
    mf_kv_str(&f, "general.architecture", "llama");
    mf_kv_str(&f, "general.name", "Tiny Llama");
    mf_kv_u32(&f, "general.file_type", 15);
    mf_kv_u32(&f, "llama.block_count", 2);
    mf_kv_u32(&f, "llama.embedding_length", 256);
    mf_kv_u32(&f, "llama.attention.head_count", 8);
    mf_kv_u32(&f, "llama.attention.head_count_kv", 2);
    mf_kv_u32(&f, "llama.feed_forward_length", 512);
    mf_kv_u32(&f, "llama.context_length", 4096);
    /* tokenizer tokens: the vocabulary when no vocab_size key */
    mf_str(&f, "tokenizer.ggml.tokens");
    mf_u32(&f, 9);
    mf_u32(&f, 8);
    mf_u64(&f, 3);
    mf_str(&f, "a");
    mf_str(&f, "b");
    mf_str(&f, "c");
    uint64_t d1[2] = {256, 3}, d2[2] = {256, 256};
    mf_tensor(&f, "token_embd.weight", 2, d1, 0, 0);
    mf_tensor(&f, "blk.0.attn_q.weight", 2, d2, 12, 3072);
    pad_to(32, 3072 + 256 * 144);
    assert_int_equal(parse(), VRAM_OK);
    assert_string_equal(m.arch, "llama");
    assert_string_equal(m.name, "Tiny Llama");
    assert_int_equal(m.layers, 2);
    assert_int_equal(m.hidden, 256);
    assert_int_equal(m.heads, 8);
    assert_int_equal(m.kv_heads, 2);
    assert_int_equal(m.head_dim, 32);
    assert_int_equal(m.ff, 512);
    assert_int_equal(m.max_ctx, 4096);
    assert_int_equal(m.vocab, 3);
    assert_int_equal(m.params, 768 + 65536);
    assert_int_equal(m.weight_bytes, 3072 + 256 * 144);
    assert_string_equal(m.stored, "q4_k");
    assert_true(m.gguf);                    /* by its bytes */
    assert_string_equal(m.quant, "Q4_K_M"); /* general.file_type, as Ollama says it */
    /* its first bytes only (a range request's): the parser asks for more,
     * and says so; all of the header: the same answer */
    struct reader pr;
    reader_open_mem_prefix(&pr, f.buf, 100, f.n);
    assert_int_equal(gguf_parse(&pr, "prefix", &m, err, sizeof err), VRAM_EINPUT);
    assert_true(pr.beyond);
    reader_open_mem_prefix(&pr, f.buf, 3072, f.n); /* the header, not the weights */
    assert_int_equal(gguf_parse(&pr, "prefix", &m, err, sizeof err), VRAM_OK);
    assert_false(pr.beyond);
    assert_int_equal(m.params, 768 + 65536);
}

static void refuse(const char *want)
{
    assert_int_equal(parse(), VRAM_EINPUT);
    if (!strstr(err, want))
        fail_msg("'%s' not in '%s'", want, err);
}

static void hostile_files(void **st)
{
    (void)st;
    f.n = 0;
    mf_bytes(&f, "GGML", 4);
    refuse("not a GGUF file");

    f.n = 0;
    mf_gguf_header(&f, 1, 0, 0);
    refuse("GGUF version 1");

    /* counts that the file cannot hold: refused before looping */
    f.n = 0;
    mf_gguf_header(&f, 3, 0xffffffffffffULL, 0xffffffffffffULL);
    refuse("more entries than the file can hold");

    /* a string length past the end */
    f.n = 0;
    mf_gguf_header(&f, 3, 0, 1);
    mf_u64(&f, 1ULL << 60);
    mf_u64(&f, 0);
    refuse("longer than the rest of the file");

    /* an array of strings claiming a billion elements */
    f.n = 0;
    mf_gguf_header(&f, 3, 0, 1);
    mf_str(&f, "tokenizer.ggml.tokens");
    mf_u32(&f, 9);
    mf_u32(&f, 8);
    mf_u64(&f, 1000000000ULL);
    refuse("more strings than the file can hold");

    /* a tensor past the end of the file */
    f.n = 0;
    mf_gguf_header(&f, 3, 1, 0);
    uint64_t d[2] = {4096, 4096};
    mf_tensor(&f, "blk.3.attn_q.weight", 2, d, 1, 0);
    pad_to(32, 1024);
    refuse("tensor 'blk.3.attn_q.weight' extends past the end of the file");

    /* a shape that overflows 64 bits */
    f.n = 0;
    mf_gguf_header(&f, 3, 1, 0);
    uint64_t big[3] = {1ULL << 40, 1ULL << 40, 16};
    mf_tensor(&f, "x", 3, big, 0, 0);
    refuse("overflows 64 bits");

    /* an unknown type */
    f.n = 0;
    mf_gguf_header(&f, 3, 1, 0);
    uint64_t one[1] = {256};
    mf_tensor(&f, "x", 1, one, 77, 0);
    refuse("ggml type 77 is unknown");

    /* a truncated header */
    f.n = 0;
    mf_gguf_header(&f, 3, 0, 2);
    mf_kv_u32(&f, "llama.block_count", 2);
    refuse("truncated");
}

/* Found by the fuzzer: a MoE file (an expert count) reached the parameter
 * count with fields the parser had not set; its input stays in the corpus
 * (tests/fuzz/corpus/gguf/regress-expert-count). */
static void expert_count_without_shape(void **st)
{
    (void)st;
    FILE *in = fopen(SRC_ROOT "/tests/fuzz/corpus/gguf/regress-expert-count", "rb");
    assert_non_null(in);
    f.n = fread(f.buf, 1, sizeof f.buf, in);
    fclose(in);
    memset(&m, 0xa5, sizeof m); /* garbage, as on a fresh stack */
    struct reader *r = malloc(sizeof *r);
    reader_open_mem(r, f.buf, f.n);
    assert_int_equal(gguf_parse(r, "t.gguf", &m, err, sizeof err), VRAM_OK);
    free(r);
    assert_int_equal(m.experts, 8);
    assert_true(m.tied_embeddings); /* it has no output.weight: llama.cpp reuses the embedding */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(type_sizes),
        cmocka_unit_test(reads_every_field),
        cmocka_unit_test(hostile_files),
        cmocka_unit_test(expert_count_without_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
