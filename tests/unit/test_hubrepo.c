/* hubrepo: the hub's names and listings, another party's: names read as
 * the hub writes them, odd paths left out before anything is named after
 * them, the model's files picked (a tag, Q4_K_M by default, every part of
 * a split GGUF, else the safetensors with their index and config.json). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "model/hubrepo.h"

static void names(void **st)
{
    (void)st;
    char o[HUBREPO_NAME_MAX], r[HUBREPO_NAME_MAX], t[32];
    assert_true(hubrepo_name("bartowski/Qwen2.5-7B-Instruct-GGUF:Q4_K_M", o, r, t));
    assert_string_equal(o, "bartowski");
    assert_string_equal(r, "Qwen2.5-7B-Instruct-GGUF");
    assert_string_equal(t, "Q4_K_M");
    assert_true(hubrepo_name("hf.co/unsloth/Small-GGUF:UD-Q4_K_XL", o, r, t));
    assert_string_equal(t, "UD-Q4_K_XL");
    assert_true(hubrepo_name("https://huggingface.co/Qwen/Qwen2.5-7B", o, r, t));
    assert_string_equal(t, "");
    static const char *const not_names[] = {"llama3.1:8b", "/models/x.gguf", "./a/b", "a/b/c",
                                            "../x", "a/..", "a/b:", "a/b:x y", "-a/b", "a/.b",
                                            "a/b c", "", "a/", NULL};
    for (size_t i = 0; not_names[i]; i++)
        assert_false(hubrepo_name(not_names[i], o, r, t));
}

static void odd_paths_left_out(void **st)
{
    (void)st;
    const char *j = "[{\"type\":\"file\",\"path\":\"ok-Q4_K_M.gguf\",\"size\":10,\"oid\":\"ab\"},"
                    "{\"type\":\"file\",\"path\":\"../escape.gguf\",\"size\":1},"
                    "{\"type\":\"file\",\"path\":\"/abs.gguf\",\"size\":1},"
                    "{\"type\":\"file\",\"path\":\".hidden\",\"size\":1},"
                    "{\"type\":\"file\",\"path\":\"a/b/c.gguf\",\"size\":1},"
                    "{\"type\":\"file\",\"path\":\"a//b\",\"size\":1},"
                    "{\"type\":\"file\",\"path\":\"x\\ny\",\"size\":1},"
                    "{\"type\":\"file\",\"path\":\"neg\",\"size\":-1},"
                    "{\"type\":\"directory\",\"path\":\"Q8_0\",\"size\":0},"
                    "{\"type\":\"file\",\"path\":\"Q8_0/x-Q8_0.gguf\",\"size\":20,"
                    "\"lfs\":{\"oid\":\"cd\",\"size\":20}}]";
    struct hubrepo h;
    char err[300];
    assert_int_equal(hubrepo_parse(j, strlen(j), &h, err, sizeof err), 0);
    assert_int_equal(h.n, 2);
    assert_string_equal(h.files[0].path, "ok-Q4_K_M.gguf");
    assert_string_equal(h.files[1].path, "Q8_0/x-Q8_0.gguf");
    assert_string_equal(h.files[1].oid, "cd"); /* the LFS blob's id */
    assert_int_equal(h.skipped, 8);
    struct hubrepo_pick p;
    assert_int_equal(hubrepo_pick(&h, "o/r", NULL, &p, err, sizeof err), 0);
    assert_string_equal(p.quant, "Q4_K_M");
    assert_int_equal(hubrepo_pick(&h, "o/r", "q8_0", &p, err, sizeof err), 0);
    assert_int_equal(p.n, 1);
    assert_int_equal(p.file[0], 1);
    assert_int_equal(hubrepo_pick(&h, "o/r", "Q2_K", &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "o/r:Q4_K_M"));
    hubrepo_free(&h);
    assert_int_equal(hubrepo_parse("{}", 2, &h, err, sizeof err), -1);
}

static void split_and_safetensors(void **st)
{
    (void)st;
    const char *j = "[{\"type\":\"file\",\"path\":\"m-Q4_K_M-00001-of-00002.gguf\",\"size\":5},"
                    "{\"type\":\"file\",\"path\":\"m-Q4_K_M-00002-of-00002.gguf\",\"size\":7}]";
    struct hubrepo h;
    struct hubrepo_pick p;
    char err[300];
    assert_int_equal(hubrepo_parse(j, strlen(j), &h, err, sizeof err), 0);
    assert_int_equal(hubrepo_pick(&h, "o/r", "", &p, err, sizeof err), 0);
    assert_int_equal(p.n, 2);
    assert_int_equal(p.bytes, 12);
    hubrepo_free(&h);
    j = "[{\"type\":\"file\",\"path\":\"config.json\",\"size\":5},"
        "{\"type\":\"file\",\"path\":\"README.md\",\"size\":5},"
        "{\"type\":\"file\",\"path\":\"model-00001-of-00002.safetensors\",\"size\":100},"
        "{\"type\":\"file\",\"path\":\"model-00002-of-00002.safetensors\",\"size\":50},"
        "{\"type\":\"file\",\"path\":\"model.safetensors.index.json\",\"size\":9}]";
    assert_int_equal(hubrepo_parse(j, strlen(j), &h, err, sizeof err), 0);
    assert_int_equal(hubrepo_pick(&h, "o/r", NULL, &p, err, sizeof err), 0);
    assert_int_equal(p.n, 4);
    assert_int_equal(p.bytes, 150);
    assert_int_equal(p.how[0], HUBREPO_WHOLE);
    assert_int_equal(p.how[1], HUBREPO_SAFETENSORS);
    assert_int_equal(hubrepo_pick(&h, "o/r", "Q4_K_M", &p, err, sizeof err), -1);
    hubrepo_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names),
        cmocka_unit_test(odd_paths_left_out),
        cmocka_unit_test(split_and_safetensors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
