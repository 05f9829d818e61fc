/* The model stores: the streaming JSON reader they share, paths resolved
 * beneath a store's root (links followed inside, refused when they leave),
 * and Ollama's store, the Hugging Face cache and LM Studio's folder laid out
 * here as those tools lay them out, hostile variants included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "model/ggufname.h"
#include "model/ggufset.h"
#include "model/hfcache.h"
#include "model/llamacache.h"
#include "model/jscan.h"
#include "model/lmstudio.h"
#include "model/localstore.h"
#include "model/ollama.h"
#include "model/storepath.h"

#include "fixture_model.h"

static char dir[64];
static char err[1024];

static void put(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void link_at(const char *target, const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    assert_int_equal(symlink(target, path), 0);
}

/* The tokens of a document, as one letter each, or "!" at an error. */
static const char *tokens(const char *text)
{
    static char out[256];
    static struct reader r;
    struct jscan j;
    reader_open_mem(&r, text, strlen(text));
    jscan_init(&j, &r);
    size_t n = 0;
    for (;;) {
        enum jscan_tok t = jscan_next(&j);
        out[n++] = "!E{}[]ksntfz"[t + 1];
        if (t == JSCAN_ERR || t == JSCAN_EOF || n == sizeof out - 1)
            break;
    }
    out[n] = '\0';
    return out;
}

static void json_stream(void **st)
{
    (void)st;
    assert_string_equal(tokens("{\"a\": [1, -2.5e3, \"x\", true, false, null], \"b\": {}}  \n"),
                        "{k[nnstfz]k{}}E");
    assert_string_equal(tokens("[]"), "[]E");
    /* what jansson refuses is refused */
    assert_string_equal(tokens("{\"a\":1,}"), "{kn!");
    assert_string_equal(tokens("[1 2]"), "[n!");
    assert_string_equal(tokens("[01]"), "[!");
    assert_string_equal(tokens("\"\\u0000\""), "!");
    assert_string_equal(tokens("\"\\ud800\""), "!");
    assert_string_equal(tokens("\"\xff\""), "!");
    assert_string_equal(tokens("\"\xc0\xaf\""), "!"); /* overlong */
    assert_string_equal(tokens("{} {}"), "{}!");
    assert_string_equal(tokens("{\"a\""), "{k!");
    char deep[200];
    memset(deep, '[', 100);
    deep[100] = '\0';
    assert_string_equal(tokens(deep) + 64, "!"); /* 64 levels, then refused */
    /* strings: escapes decoded, long ones cut and said so, numbers whole or not */
    static struct reader r;
    struct jscan j;
    const char *text = "[\"a\\u00e9\\ud83d\\ude00\\n\", 123456789012, 1.5, 99999999999999999999]";
    reader_open_mem(&r, text, strlen(text));
    jscan_init(&j, &r);
    assert_int_equal(jscan_next(&j), JSCAN_ARR);
    assert_int_equal(jscan_next(&j), JSCAN_STRING);
    assert_string_equal(j.str, "a\xc3\xa9\xf0\x9f\x98\x80\n");
    assert_int_equal(jscan_next(&j), JSCAN_NUM);
    assert_true(j.whole && j.num == 123456789012LL);
    assert_int_equal(jscan_next(&j), JSCAN_NUM);
    assert_false(j.whole);
    assert_int_equal(jscan_next(&j), JSCAN_NUM);
    assert_false(j.whole); /* past 64 bits */
    /* a value skipped whole, brackets in its strings not counted */
    text = "{\"a\": {\"b\": [1, {\"c\": \"}]\\\"\"}]}, \"d\": 2}";
    reader_open_mem(&r, text, strlen(text));
    jscan_init(&j, &r);
    assert_int_equal(jscan_next(&j), JSCAN_OBJ);
    assert_int_equal(jscan_next(&j), JSCAN_KEY);
    assert_int_equal(jscan_skip(&j), JSCAN_OBJ);
    assert_int_equal(jscan_next(&j), JSCAN_KEY);
    assert_string_equal(j.str, "d");
    assert_int_equal(jscan_next(&j), JSCAN_NUM);
    assert_int_equal(jscan_next(&j), JSCAN_OBJ_END);
    assert_int_equal(jscan_next(&j), JSCAN_EOF);
}

static int count(const char *name, void *arg)
{
    (void)name;
    (*(int *)arg)++;
    return 0;
}

static void beneath(void **st)
{
    (void)st;
    put("store/a/file", "x");
    put("outside", "secret");
    link_at("../a/file", "store/a/up");          /* stays inside */
    mkdir("/tmp/vram-x-never", 0755);
    char rel[256];
    snprintf(rel, sizeof rel, "store/a/esc");
    link_at("../../outside", rel);                /* climbs out */
    link_at("/etc/passwd", "store/a/abs");        /* absolute */
    link_at("missing", "store/a/dangling");
    link_at("loop2", "store/a/loop1");
    link_at("loop1", "store/a/loop2");
    char fifo[256];
    snprintf(fifo, sizeof fifo, "%s/store/a/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    char root_path[256];
    snprintf(root_path, sizeof root_path, "%s/store", dir);
    int root = open(root_path, O_RDONLY | O_DIRECTORY);
    assert_true(root >= 0);
    mode_t kind;
    int fd = storepath_open(root, "a/up", 0, &kind);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(storepath_open(root, "a/esc", 0, &kind), -1);
    assert_int_equal(errno, EXDEV);
    assert_int_equal(storepath_open(root, "a/abs", 0, &kind), -1);
    assert_int_equal(errno, EXDEV);
    assert_int_equal(storepath_open(root, "../outside", 0, &kind), -1);
    assert_int_equal(errno, EXDEV);
    assert_int_equal(storepath_open(root, "a/../../outside", 0, &kind), -1);
    assert_int_equal(errno, EXDEV);
    assert_int_equal(storepath_open(root, "a/dangling", 0, &kind), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(storepath_open(root, "a/loop1", 0, &kind), -1);
    assert_int_equal(errno, ELOOP);
    /* a FIFO is refused without being opened (an open would wait) */
    assert_int_equal(storepath_open(root, "a/fifo", 0, &kind), -1);
    assert_int_equal(errno, EINVAL);
    assert_true(S_ISFIFO(kind));
    assert_string_equal(storepath_why(EINVAL, kind), "a FIFO");
    int n = 0;
    assert_int_equal(storepath_list(root, "a", count, &n, 100), 0);
    assert_int_equal(n, 8);
    close(root);
}

static void make_gguf(const char *rel)
{
    static struct mf f;
    put(rel, ""); /* its folders */
    f.n = 0;
    uint64_t d[2] = {256, 4};
    mf_gguf_header(&f, 3, 1, 5);
    mf_kv_str(&f, "general.architecture", "llama");
    mf_kv_u32(&f, "llama.block_count", 1);
    mf_kv_u32(&f, "llama.embedding_length", 256);
    mf_kv_u32(&f, "llama.attention.head_count", 2);
    mf_kv_u32(&f, "llama.feed_forward_length", 512);
    mf_tensor(&f, "blk.0.ffn_up.weight", 2, d, 1, 0);
    while (f.n % 32)
        f.buf[f.n++] = 0;
    memset(f.buf + f.n, 0, 2048);
    f.n += 2048;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    assert_int_equal(mf_write(&f, path), 0);
}

#define DIGEST "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void manifest(const char *rel, const char *digest)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"schemaVersion\":2,\"config\":{\"digest\":\"sha256:" DIGEST "\"},\"layers\":["
             "{\"mediaType\":\"application/vnd.ollama.image.license\",\"digest\":\"x\"},"
             "{\"mediaType\":\"application/vnd.ollama.image.model\",\"digest\":\"%s\","
             "\"size\":2400}]}",
             digest);
    put(rel, text);
}

static void ollama_store(void **st)
{
    (void)st;
    char root[256];
    snprintf(root, sizeof root, "%s/ollama", dir);
    put("ollama/blobs/.keep", "");
    make_gguf("ollama/blobs/sha256-" DIGEST);
    manifest("ollama/manifests/registry.ollama.ai/library/tiny/1b", "sha256:" DIGEST);
    manifest("ollama/manifests/registry.ollama.ai/someone/tiny/latest", "sha256:" DIGEST);
    struct modelref ref;
    assert_int_equal(ollama_find(root, "tiny:1b", &ref, err, sizeof err), VRAM_OK);
    assert_string_equal(ref.dir, "blobs");
    assert_string_equal(ref.file, "sha256-" DIGEST);
    assert_true(ref.gguf && ref.disk > 2048);
    assert_int_equal(ollama_find(root, "someone/tiny", &ref, err, sizeof err), VRAM_OK);
    assert_int_equal(ollama_find(root, "tiny", &ref, err, sizeof err), 1); /* no :latest */
    assert_int_equal(ollama_find(root, "../tiny:1b", &ref, err, sizeof err), 1);
    assert_int_equal(ollama_find(root, "a/b/c/d:1", &ref, err, sizeof err), 1);
    /* a digest that would make a path */
    manifest("ollama/manifests/registry.ollama.ai/library/bad/1", "sha256:../../../etc/passwd");
    assert_int_equal(ollama_find(root, "bad:1", &ref, err, sizeof err), VRAM_EINPUT);
    assert_non_null(strstr(err, "is not sha256:64 hex digits"));
    /* a manifest linked from outside the store */
    put("elsewhere/manifest", "{}");
    char target[256];
    snprintf(target, sizeof target, "../../../../../elsewhere/manifest");
    link_at(target, "ollama/manifests/registry.ollama.ai/library/tiny/out");
    assert_int_equal(ollama_find(root, "tiny:out", &ref, err, sizeof err), VRAM_EINPUT);
    assert_non_null(strstr(err, "leads outside the store"));
    /* a huge manifest: refused by its size, not read */
    char *huge = malloc(2 << 20);
    memset(huge, ' ', 2 << 20);
    huge[(2 << 20) - 1] = '\0';
    huge[0] = '{';
    huge[(2 << 20) - 2] = '}';
    put("ollama/manifests/registry.ollama.ai/library/huge/1", huge);
    free(huge);
    assert_int_equal(ollama_find(root, "huge:1", &ref, err, sizeof err), VRAM_EINPUT);
    assert_non_null(strstr(err, "a manifest of 2.00 MiB"));
    /* the model's blob missing */
    manifest("ollama/manifests/registry.ollama.ai/library/gone/1", "sha256:" DIGEST "0");
    assert_int_equal(ollama_find(root, "gone:1", &ref, err, sizeof err), VRAM_EINPUT);
    /* read through the store: the GGUF's shape, the store's name */
    assert_int_equal(ollama_find(root, "tiny:1b", &ref, err, sizeof err), VRAM_OK);
    struct model_info m;
    assert_int_equal(localstore_load(&ref, &m, err, sizeof err), VRAM_OK);
    assert_string_equal(m.name, "tiny:1b");
    assert_int_equal(m.hidden, 256);
}

static int names(const struct modelref *ref, const char *why, void *arg)
{
    char *out = arg;
    size_t at = strlen(out);
    snprintf(out + at, 1024 - at, "%s%s;", ref->name, why ? "!" : "");
    return 0;
}

/* What a GGUF file's name says, as publishers name them. */
static void gguf_names(void **st)
{
    (void)st;
    static const struct {
        const char *file, *quant;
        unsigned part, parts;
    } cases[] = {
        {"Qwen2.5-7B-Instruct-Q4_K_M.gguf", "Q4_K_M", 1, 1},
        {"qwen2.5-7b-instruct-q4_k_m.gguf", "Q4_K_M", 1, 1},
        {"llama-2-7b.Q5_K_S.gguf", "Q5_K_S", 1, 1},
        {"Meta-Llama-3.1-70B-Instruct-Q8_0-00002-of-00003.gguf", "Q8_0", 2, 3},
        {"gemma-2-9b-it-IQ4_XS.gguf", "IQ4_XS", 1, 1},
        {"Small-UD-Q4_K_XL.gguf", "Q4_K_XL", 1, 1},
        {"phi-3-mini-f16.gguf", "F16", 1, 1},
        {"Qwen3-8B-BF16.gguf", "BF16", 1, 1},
        {"Qwen3-8B.gguf", "", 1, 1},
        {"model-Q4_0_4_4.gguf", "Q4_0_4_4", 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct ggufname g;
        assert_true(ggufname_parse(cases[i].file, &g));
        if (strcmp(g.quant, cases[i].quant) || g.part != cases[i].part || g.parts != cases[i].parts)
            fail_msg("%s: %s %u/%u", cases[i].file, g.quant, g.part, g.parts);
    }
    assert_true(ggufname_is_model("x-Q8_0-00001-of-00002.gguf"));
    assert_false(ggufname_is_model("x-Q8_0-00002-of-00002.gguf"));
    assert_false(ggufname_is_model("mmproj-x-f16.gguf"));
    assert_false(ggufname_is_model("x.safetensors"));
    assert_true(ggufname_matches("Small-UD-Q4_K_XL.gguf", "UD-Q4_K_XL"));
    assert_true(ggufname_matches("Small-UD-Q4_K_XL.gguf", "q4_k_xl"));
    assert_false(ggufname_matches("Small-UD-Q4_K_XL.gguf", "Q4_K"));
    assert_false(ggufname_matches("Small-Q4_K_M.gguf", "Q4_K"));
    char base[64], tag[16];
    assert_true(ggufset_split_tag("org/repo:Q4_K_M", base, sizeof base, tag, sizeof tag));
    assert_string_equal(base, "org/repo");
    assert_string_equal(tag, "Q4_K_M");
    assert_false(ggufset_split_tag("host:1/x", base, sizeof base, tag, sizeof tag));
    assert_false(ggufset_split_tag("org/repo:", base, sizeof base, tag, sizeof tag));
}

static void hf_cache(void **st)
{
    (void)st;
    char root[256];
    snprintf(root, sizeof root, "%s/hub", dir);
    const char *repo = "hub/models--org--tiny";
    char p[256];
    snprintf(p, sizeof p, "%s/refs/main", repo);
    put(p, "0123456789abcdef0123456789abcdef01234567\n");
    snprintf(p, sizeof p, "%s/blobs/aaa", repo);
    make_gguf(p);
    snprintf(p, sizeof p, "%s/snapshots/0123456789abcdef0123456789abcdef01234567/.keep", repo);
    put(p, "");
    snprintf(p, sizeof p, "%s/snapshots/0123456789abcdef0123456789abcdef01234567/tiny.gguf", repo);
    link_at("../../blobs/aaa", p);
    struct modelref ref;
    assert_int_equal(hfcache_find(root, "org/tiny", &ref, err, sizeof err), VRAM_OK);
    assert_true(ref.gguf && ref.disk > 2048);
    struct model_info m;
    assert_int_equal(localstore_load(&ref, &m, err, sizeof err), VRAM_OK);
    assert_string_equal(m.name, "org/tiny");
    assert_int_equal(hfcache_find(root, "org/none", &ref, err, sizeof err), 1);
    /* a second quantization, and a model split in two parts in a folder of
     * its own: each a model, named REPO:QUANT; the repository by its name
     * alone lists them */
    snprintf(p, sizeof p, "%s/blobs/bbb", repo);
    make_gguf(p);
    snprintf(p, sizeof p, "%s/snapshots/0123456789abcdef0123456789abcdef01234567/tiny-Q8_0.gguf",
             repo);
    link_at("../../blobs/bbb", p);
    snprintf(p, sizeof p,
             "%s/snapshots/0123456789abcdef0123456789abcdef01234567/Q6_K/tiny-Q6_K-00001-of-00002.gguf",
             repo);
    make_gguf(p);
    snprintf(p, sizeof p,
             "%s/snapshots/0123456789abcdef0123456789abcdef01234567/Q6_K/tiny-Q6_K-00002-of-00002.gguf",
             repo);
    make_gguf(p);
    assert_int_equal(hfcache_find(root, "org/tiny", &ref, err, sizeof err), VRAM_OK);
    assert_int_equal(localstore_load(&ref, &m, err, sizeof err), VRAM_EINPUT);
    if (!strstr(err, "org/tiny: 3 GGUF models; name one: ") || !strstr(err, "org/tiny:Q8_0 (") ||
        !strstr(err, "org/tiny:Q6_K (") || !strstr(err, "org/tiny/tiny.gguf ("))
        fail_msg("%s", err);
    assert_int_equal(hfcache_find(root, "org/tiny:q8_0", &ref, err, sizeof err), VRAM_OK);
    assert_string_equal(ref.name, "org/tiny:Q8_0");
    assert_string_equal(ref.file, "tiny-Q8_0.gguf");
    assert_int_equal(hfcache_find(root, "org/tiny:Q6_K", &ref, err, sizeof err), VRAM_OK);
    assert_string_equal(ref.file, "Q6_K/tiny-Q6_K-00001-of-00002.gguf");
    assert_true(ref.disk > 2 * 2048); /* both parts */
    assert_int_equal(localstore_load(&ref, &m, err, sizeof err), VRAM_OK);
    assert_int_equal(m.params, 2 * 1024); /* the tensors of both parts */
    assert_int_equal(hfcache_find(root, "org/tiny:Q2_K", &ref, err, sizeof err), VRAM_EINPUT);
    assert_non_null(strstr(err, "no GGUF model answers to Q2_K"));
    char out[1024] = "";
    hfcache_list(root, names, out);
    if (!strstr(out, "org/tiny:Q8_0;") || !strstr(out, "org/tiny:Q6_K;") ||
        !strstr(out, "org/tiny/tiny.gguf;") || strstr(out, "org/tiny;"))
        fail_msg("%s", out);
    assert_int_equal(hfcache_find(root, "org--x/tiny", &ref, err, sizeof err), 1);
    /* a snapshot file that hangs, or leaves the cache: refused by name */
    const char *evil = "hub/models--org--evil";
    snprintf(p, sizeof p, "%s/snapshots/abc/config.json", evil);
    put(p, "{}");
    snprintf(p, sizeof p, "%s/snapshots/abc/config.json", evil);
    char full[512];
    snprintf(full, sizeof full, "%s/%s", dir, p);
    unlink(full);
    link_at("../../../../../elsewhere/config.json", p);
    assert_int_equal(hfcache_find(root, "org/evil", &ref, err, sizeof err), VRAM_OK);
    assert_int_equal(localstore_load(&ref, &m, err, sizeof err), VRAM_EINPUT);
    if (!strstr(err, "leads outside the store"))
        fail_msg("%s", err);
}


static void lm_studio(void **st)
{
    (void)st;
    char root[256];
    snprintf(root, sizeof root, "%s/lms", dir);
    put("lms/pub/repo-GGUF/.keep", "");
    make_gguf("lms/pub/repo-GGUF/repo-Q4_K_M.gguf");
    make_gguf("lms/pub/repo-GGUF/mmproj-repo-f16.gguf"); /* a projector, not a model */
    struct modelref ref;
    assert_int_equal(lmstudio_find(root, "pub/repo-GGUF", &ref, err, sizeof err), VRAM_OK);
    assert_string_equal(ref.file, "repo-Q4_K_M.gguf");
    make_gguf("lms/pub/repo-GGUF/repo-Q8_0.gguf");
    assert_int_equal(lmstudio_find(root, "pub/repo-GGUF", &ref, err, sizeof err), VRAM_EINPUT);
    assert_non_null(strstr(err, "2 GGUF models; name one, as pub/repo-GGUF:QUANT"));
    assert_non_null(strstr(err, "pub/repo-GGUF/repo-Q8_0.gguf ("));
    assert_int_equal(lmstudio_find(root, "pub/repo-GGUF:q8_0", &ref, err, sizeof err), VRAM_OK);
    assert_string_equal(ref.file, "repo-Q8_0.gguf");
    assert_int_equal(lmstudio_find(root, "pub/repo-GGUF:Q2_K", &ref, err, sizeof err),
                     VRAM_EINPUT);
    assert_int_equal(lmstudio_find(root, "pub/repo-GGUF/repo-Q8_0.gguf", &ref, err, sizeof err),
                     VRAM_OK);
    char out[1024] = "";
    lmstudio_list(root, names, out);
    assert_non_null(strstr(out, "pub/repo-GGUF/repo-Q4_K_M.gguf;"));
    assert_non_null(strstr(out, "pub/repo-GGUF/repo-Q8_0.gguf;"));
    assert_null(strstr(out, "mmproj"));
    /* the Ollama store above, listed as `ollama list` names its models */
    snprintf(root, sizeof root, "%s/ollama", dir);
    out[0] = '\0';
    ollama_list(root, names, out);
    assert_non_null(strstr(out, "tiny:1b;"));
    assert_non_null(strstr(out, "someone/tiny:latest;"));
    assert_non_null(strstr(out, "bad:1!;")); /* listed, with why it cannot be read */
}

/* llama.cpp's cache: the flat layout (OWNER_REPO_FILE.gguf beside
 * manifest=OWNER=REPO=TAG.json), and the Hugging Face layout it writes now
 * under LLAMA_CACHE. */
static void llama_cache(void **st)
{
    (void)st;
    char root[256];
    snprintf(root, sizeof root, "%s/llama.cpp", dir);
    put("llama.cpp/manifest=bartowski=Qwen_2-GGUF=Q4_K_M.json", "{}");
    make_gguf("llama.cpp/bartowski_Qwen_2-GGUF_Qwen_2-Q4_K_M.gguf");
    make_gguf("llama.cpp/bartowski_Qwen_2-GGUF_Qwen_2-Q8_0.gguf");
    put("llama.cpp/bartowski_Qwen_2-GGUF_Qwen_2-Q8_0.gguf.etag", "x");
    put("llama.cpp/manifest=unsloth=Small-GGUF=UD-Q4_K_XL.json", "{}");
    make_gguf("llama.cpp/unsloth_Small-GGUF_Small-UD-Q4_K_XL.gguf");
    make_gguf("llama.cpp/by-url.gguf");
    make_gguf("llama.cpp/mmproj-Qwen_2-f16.gguf");
    put("llama.cpp/models--ggml-org--new-GGUF/refs/main", "0123456789abcdef0123456789abcdef01234567");
    make_gguf("llama.cpp/models--ggml-org--new-GGUF/snapshots/0123456789abcdef0123456789abcdef01234567/new-Q4_0.gguf");
    char out[1024] = "";
    llamacache_list(root, names, out);
    if (!strstr(out, "bartowski/Qwen_2-GGUF:Q4_K_M;") || !strstr(out, "bartowski/Qwen_2-GGUF:Q8_0;") ||
        !strstr(out, "unsloth/Small-GGUF:UD-Q4_K_XL;") || !strstr(out, "by-url;") ||
        !strstr(out, "ggml-org/new-GGUF:Q4_0;") || strstr(out, "mmproj"))
        fail_msg("%s", out);
    struct modelref ref;
    assert_int_equal(llamacache_find(root, "bartowski/Qwen_2-GGUF:q8_0", &ref, err, sizeof err),
                     VRAM_OK);
    assert_string_equal(ref.file, "bartowski_Qwen_2-GGUF_Qwen_2-Q8_0.gguf");
    assert_string_equal(ref.store, "llamacpp");
    assert_int_equal(llamacache_find(root, "bartowski/Qwen_2-GGUF", &ref, err, sizeof err),
                     VRAM_EINPUT);
    assert_non_null(strstr(err, "2 GGUF models of bartowski/Qwen_2-GGUF; name one"));
    assert_int_equal(llamacache_find(root, "unsloth/Small-GGUF", &ref, err, sizeof err), VRAM_OK);
    assert_string_equal(ref.name, "unsloth/Small-GGUF:UD-Q4_K_XL");
    assert_int_equal(llamacache_find(root, "by-url", &ref, err, sizeof err), VRAM_OK);
    assert_int_equal(llamacache_find(root, "ggml-org/new-GGUF:Q4_0", &ref, err, sizeof err), VRAM_OK);
    assert_string_equal(ref.store, "llamacpp");
    struct model_info m;
    assert_int_equal(localstore_load(&ref, &m, err, sizeof err), VRAM_OK);
    assert_int_equal(llamacache_find(root, "../x", &ref, err, sizeof err), 1);
    assert_int_equal(llamacache_find(root, "nobody/none:Q4_0", &ref, err, sizeof err), 1);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/vram-stores-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_stream), cmocka_unit_test(beneath), cmocka_unit_test(ollama_store),
        cmocka_unit_test(hf_cache),    cmocka_unit_test(lm_studio),    cmocka_unit_test(gguf_names),
        cmocka_unit_test(llama_cache),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        rc = 1;
    return rc;
}
