/* Model names as clients send them (Hugging Face ids, Ollama's
 * namespace/model:tag), the ones refused, and their escaped forms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "core/modelname.h"

static void names_clients_send_are_good(void **st)
{
    (void)st;
    const char *good[] = {"qwen-7b",
                          "llama3.1:8b",
                          "Qwen/Qwen2.5-7B-Instruct",
                          "library/llama3.1:8b",
                          "hf.co/bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M",
                          "01-ai/Yi-6B",
                          "gpt-4o",
                          "a",
                          ".hidden",
                          NULL};
    for (int i = 0; good[i]; i++)
        assert_null(modelname_check(good[i]));
}

static void names_that_could_hurt_are_refused(void **st)
{
    (void)st;
    char long_name[200];
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    char max[MODELNAME_MAX];
    memset(max, 'a', sizeof max - 1);
    max[sizeof max - 1] = '\0';
    assert_null(modelname_check(max)); /* 127: the longest */
    assert_non_null(strstr(modelname_check(long_name), "longer than 127"));
    assert_non_null(strstr(modelname_check("/etc/passwd"), "starts with '/'"));
    assert_non_null(strstr(modelname_check("../x"), "'..'"));
    assert_non_null(strstr(modelname_check("a/../../b"), "'..'"));
    assert_non_null(strstr(modelname_check("a..b"), "'..'"));
    assert_non_null(strstr(modelname_check("a/./b"), "'.'"));
    assert_non_null(strstr(modelname_check("./a"), "'.'"));
    assert_non_null(strstr(modelname_check("a/."), "'.'"));
    assert_non_null(strstr(modelname_check("a//b"), "'//'"));
    assert_non_null(strstr(modelname_check("a/"), "ends with '/'"));
    assert_non_null(strstr(modelname_check("a\nb"), "control character"));
    assert_non_null(strstr(modelname_check("a\x1b[31m"), "control character"));
    assert_non_null(strstr(modelname_check("a\x7f"), "control character"));
    assert_non_null(modelname_check(""));
    const char *bad_chars[] = {"a b", "a\"b", "a\\b", "a%2Fb", "a;b", "a,b", "a=b", "a]b",
                               "caf\xc3\xa9", "a$b", "a'b", "a*b", NULL};
    for (int i = 0; bad_chars[i]; i++)
        assert_non_null(strstr(modelname_check(bad_chars[i]), "letters, digits"));
}

static void a_name_with_a_slash_is_one_file(void **st)
{
    (void)st;
    char out[MODELNAME_MAX * 3];
    assert_int_equal(modelname_file("Qwen/Qwen2.5-7B", out, sizeof out), 0);
    assert_string_equal(out, "Qwen%2FQwen2.5-7B");
    assert_int_equal(modelname_file("hf.co/a/b:Q4", out, sizeof out), 0);
    assert_string_equal(out, "hf.co%2Fa%2Fb:Q4");
    assert_null(strchr(out, '/'));
    assert_int_equal(modelname_file("plain", out, sizeof out), 0);
    assert_string_equal(out, "plain");
    char small[7];
    assert_int_equal(modelname_file("a/bc", small, sizeof small), 0); /* "a%2Fbc": 6 + NUL */
    assert_int_equal(modelname_file("a/bcd", small, sizeof small), -1);
}

static void a_name_in_a_url_is_one_segment(void **st)
{
    (void)st;
    char out[MODELNAME_MAX * 3];
    assert_int_equal(modelname_url("Qwen/Qwen2.5-7B", out, sizeof out), 0);
    assert_string_equal(out, "Qwen%2FQwen2.5-7B");
    assert_int_equal(modelname_url("llama3.1:8b", out, sizeof out), 0);
    assert_string_equal(out, "llama3.1%3A8b");
    assert_int_equal(modelname_url("a_b-c.d~", out, sizeof out), 0);
    assert_string_equal(out, "a_b-c.d~");
    char small[4];
    assert_int_equal(modelname_url("a/b", small, sizeof small), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_clients_send_are_good),
        cmocka_unit_test(names_that_could_hurt_are_refused),
        cmocka_unit_test(a_name_with_a_slash_is_one_file),
        cmocka_unit_test(a_name_in_a_url_is_one_segment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
