/* safetensors headers: every field read from files the test writes, and
 * every kind of broken or hostile header refused with a clear message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "model/modelfile.h"
#include "model/safetensors.h"
#include "fixture_model.h"

static struct mf f;
static char err[512];

static int parse(const struct mf *file, struct safetensors_summary *s)
{
    struct reader *r = malloc(sizeof *r);
    reader_open_mem(r, file->buf, file->n);
    memset(s, 0, sizeof *s);
    int rc = safetensors_parse(r, "t.safetensors", s, err, sizeof err);
    free(r);
    return rc;
}

static void reads_every_field(void **st)
{
    (void)st;
    f.n = 0;
    mf_safetensors(&f,
                   "{\"__metadata__\":{\"format\":\"pt\"},"
                   "\"model.embed_tokens.weight\":{\"dtype\":\"BF16\",\"shape\":[100,8],"
                   "\"data_offsets\":[0,1600]},"
                   "\"model.layers.3.mlp.up_proj.weight\":{\"dtype\":\"F32\",\"shape\":[8,4],"
                   "\"data_offsets\":[1600,1728]},"
                   "\"model.layers.3.q\":{\"dtype\":\"F8_E4M3\",\"shape\":[16],"
                   "\"data_offsets\":[1728,1744]}}",
                   1744);
    struct safetensors_summary s;
    assert_int_equal(parse(&f, &s), VRAM_OK);
    assert_int_equal(s.tensors, 3);
    assert_int_equal(s.params, 800 + 32 + 16);
    assert_int_equal(s.bytes, 1744);
    assert_int_equal(s.max_layer, 4);
    assert_int_equal(s.embed_rows, 100);
    assert_int_equal(s.embed_cols, 8);
}

static void refuse(const char *header, size_t data, const char *want)
{
    f.n = 0;
    mf_safetensors(&f, header, data);
    struct safetensors_summary s;
    assert_int_equal(parse(&f, &s), VRAM_EINPUT);
    if (!strstr(err, want))
        fail_msg("'%s' not in '%s'", want, err);
    assert_non_null(strstr(err, "t.safetensors: "));
}

static void hostile_headers(void **st)
{
    (void)st;
    refuse("{\"a\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[0,8]}}", 4,
           "tensor 'a' extends past the end of the file");
    refuse("{\"a\":{\"dtype\":\"Q9\",\"shape\":[4],\"data_offsets\":[0,8]}}", 8,
           "tensor 'a': unknown dtype 'Q9'");
    refuse("{\"a\":{\"dtype\":\"F16\",\"shape\":[4294967296,4294967296,16],"
           "\"data_offsets\":[0,8]}}",
           8, "overflows 64 bits");
    refuse("{\"a\":{\"dtype\":\"F16\",\"shape\":[5],\"data_offsets\":[0,8]}}", 8,
           "does not match its shape");
    refuse("{\"a\":{\"dtype\":\"F16\",\"shape\":[-1],\"data_offsets\":[0,8]}}", 8,
           "a dimension is not a size");
    refuse("{\"a\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[8,0]}}", 8,
           "extends past the end");
    refuse("{\"a\":{\"dtype\":\"F16\",\"shape\":[4]}}", 8, "data_offsets is not [begin, end]");
    refuse("{\"a\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[0,8]},", 8,
           "header is not valid JSON");
    refuse("{\"\xff\xfe\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[0,8]}}", 8,
           "header is not valid JSON"); /* not UTF-8 */
    refuse("[1,2]", 0, "not a JSON object");
}

static void impossible_lengths(void **st)
{
    (void)st;
    struct safetensors_summary s;
    /* a header length far past the file: refused before any allocation */
    f.n = 0;
    mf_u64(&f, 0x7fffffffffffffffULL);
    mf_bytes(&f, "{}", 2);
    assert_int_equal(parse(&f, &s), VRAM_EINPUT);
    assert_non_null(strstr(err, "header length"));
    f.n = 0;
    mf_u64(&f, 0);
    assert_int_equal(parse(&f, &s), VRAM_EINPUT);
    f.n = 0;
    mf_bytes(&f, "abc", 3);
    assert_int_equal(parse(&f, &s), VRAM_EINPUT);
    assert_non_null(strstr(err, "too short"));
}

static void sharded_folder(void **st)
{
    (void)st;
    char dir[] = "/tmp/vram-st-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    for (int i = 1; i <= 2; i++) {
        f.n = 0;
        char hdr[256];
        snprintf(hdr, sizeof hdr,
                 "{\"model.layers.%d.w\":{\"dtype\":\"BF16\",\"shape\":[64,32],"
                 "\"data_offsets\":[0,4096]}}",
                 i);
        mf_safetensors(&f, hdr, 4096);
        snprintf(path, sizeof path, "%s/model-0000%d-of-00002.safetensors", dir, i);
        assert_int_equal(mf_write(&f, path), 0);
    }
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    FILE *o = fopen(path, "w");
    fprintf(o, "{\"weight_map\":{\"model.layers.1.w\":\"model-00001-of-00002.safetensors\","
               "\"model.layers.2.w\":\"model-00002-of-00002.safetensors\"}}");
    fclose(o);
    snprintf(path, sizeof path, "%s/config.json", dir);
    o = fopen(path, "w");
    fprintf(o, "{\"model_type\":\"llama\",\"hidden_size\":32,\"num_hidden_layers\":2,"
               "\"num_attention_heads\":4,\"num_key_value_heads\":2,\"intermediate_size\":64,"
               "\"vocab_size\":100,\"torch_dtype\":\"bfloat16\"}");
    fclose(o);
    struct model_info m;
    assert_int_equal(modelfile_load(dir, &m, err, sizeof err), VRAM_OK);
    assert_int_equal(m.params, 2 * 2048); /* from the weights, not the config */
    assert_int_equal(m.weight_bytes, 2 * 4096);
    assert_string_equal(m.stored, "bf16");
    assert_int_equal(m.layers, 2);
    assert_int_equal(m.kv_heads, 2);
    assert_int_equal(m.head_dim, 8);

    /* an index naming a shard outside the folder is refused */
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    o = fopen(path, "w");
    fprintf(o, "{\"weight_map\":{\"w\":\"../../etc/passwd\"}}");
    fclose(o);
    assert_int_equal(modelfile_load(dir, &m, err, sizeof err), VRAM_EINPUT);
    assert_non_null(strstr(err, "outside the folder"));
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_every_field),
        cmocka_unit_test(hostile_headers),
        cmocka_unit_test(impossible_lengths),
        cmocka_unit_test(sharded_folder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
