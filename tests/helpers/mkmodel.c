/* mkmodel: writes model files for tests and benchmarks, with headers like
 * the real ones and zeros (or holes) for weights.
 *   mkmodel gguf PATH [GIB]   a llama-shaped Q4_K GGUF (file type Q4_K_M); with GIB, its tensor
 *                             data adds up to GIB (a sparse file)
 *   mkmodel shards DIR N      N bf16 safetensors shards, their index and a
 *                             config.json */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../unit/fixture_model.h"

static struct mf f;

static int gguf(const char *path, double gib)
{
    const unsigned layers = 32, hidden = 4096, ff = 14336, vocab = 32000;
    /* per layer: q, k, v, o, gate, up, down */
    uint64_t shapes[7][2] = {{hidden, hidden}, {hidden, 1024}, {hidden, 1024}, {hidden, hidden},
                             {hidden, ff},     {hidden, ff},   {ff, hidden}};
    const char *names[7] = {"attn_q",   "attn_k", "attn_v",  "attn_output",
                            "ffn_gate", "ffn_up", "ffn_down"};
    double scale = 1;
    if (gib > 0) { /* stretch the last dimension so the data totals gib */
        double base = 0;
        for (int t = 0; t < 7; t++)
            base += (double)shapes[t][0] * shapes[t][1] * layers * 144 / 256;
        scale = gib * (1 << 30) / base;
    }
    mf_gguf_header(&f, 3, 1 + 7 * layers, 9);
    mf_kv_str(&f, "general.architecture", "llama");
    mf_kv_u32(&f, "general.file_type", 15); /* llama.cpp's Q4_K_M, as most downloads are */
    mf_kv_str(&f, "general.name", "mkmodel llama");
    mf_kv_u32(&f, "llama.block_count", layers);
    mf_kv_u32(&f, "llama.embedding_length", hidden);
    mf_kv_u32(&f, "llama.attention.head_count", 32);
    mf_kv_u32(&f, "llama.attention.head_count_kv", 8);
    mf_kv_u32(&f, "llama.feed_forward_length", ff);
    mf_kv_u32(&f, "llama.vocab_size", vocab);
    uint64_t off = 0, emb[2] = {hidden, vocab};
    mf_tensor(&f, "token_embd.weight", 2, emb, 8, off); /* q8_0 */
    off += (uint64_t)hidden * vocab / 32 * 34;
    for (unsigned l = 0; l < layers; l++)
        for (int t = 0; t < 7; t++) {
            char name[64];
            snprintf(name, sizeof name, "blk.%u.%s.weight", l, names[t]);
            uint64_t d[2] = {shapes[t][0], (uint64_t)(shapes[t][1] * scale)};
            mf_tensor(&f, name, 2, d, 12, off); /* q4_k */
            off += d[0] * d[1] / 256 * 144;
            off = (off + 31) & ~31ULL;
        }
    while (f.n % 32)
        f.buf[f.n++] = 0;
    if (mf_write(&f, path) < 0 || truncate(path, (off_t)(f.n + off)) < 0) {
        fprintf(stderr, "mkmodel: %s: %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

static int shards(const char *dir, int n)
{
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return 1;
    char path[512];
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    FILE *idx = fopen(path, "w");
    if (!idx)
        return 1;
    fprintf(idx, "{\"metadata\":{},\"weight_map\":{");
    for (int s = 1; s <= n; s++) {
        /* four 4096 x 1024 bf16 tensors a shard; data is a hole */
        char hdr[2048];
        int len = snprintf(hdr, sizeof hdr, "{");
        for (int t = 0; t < 4; t++) {
            uint64_t b = (uint64_t)t * 4096 * 1024 * 2, e = b + 4096ULL * 1024 * 2;
            len += snprintf(hdr + len, sizeof hdr - (size_t)len,
                            "%s\"model.layers.%d.t%d.weight\":{\"dtype\":\"BF16\",\"shape\":"
                            "[4096,1024],\"data_offsets\":[%llu,%llu]}",
                            t ? "," : "", s - 1, t, (unsigned long long)b, (unsigned long long)e);
            fprintf(idx, "%s\"model.layers.%d.t%d.weight\":\"model-%05d-of-%05d.safetensors\"",
                    s > 1 || t ? "," : "", s - 1, t, s, n);
        }
        snprintf(hdr + len, sizeof hdr - (size_t)len, "}");
        f.n = 0;
        mf_safetensors(&f, hdr, 0);
        snprintf(path, sizeof path, "%s/model-%05d-of-%05d.safetensors", dir, s, n);
        if (mf_write(&f, path) < 0 || truncate(path, (off_t)(f.n + 4ULL * 4096 * 1024 * 2)) < 0)
            return 1;
    }
    fprintf(idx, "}}\n");
    fclose(idx);
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *c = fopen(path, "w");
    if (!c)
        return 1;
    fprintf(c,
            "{\"model_type\":\"llama\",\"hidden_size\":4096,\"num_hidden_layers\":%d,"
            "\"num_attention_heads\":32,\"num_key_value_heads\":8,\"intermediate_size\":14336,"
            "\"vocab_size\":128256,\"torch_dtype\":\"bfloat16\"}\n",
            n);
    fclose(c);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "gguf"))
        return gguf(argv[2], argc > 3 ? atof(argv[3]) : 0);
    if (argc == 4 && !strcmp(argv[1], "shards"))
        return shards(argv[2], atoi(argv[3]));
    fprintf(stderr, "usage: mkmodel gguf PATH [GIB] | mkmodel shards DIR N\n");
    return 2;
}
