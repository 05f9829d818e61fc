/* lscmd: llama-swap's cmd split into the words it runs (no shell), and
 * those words written back so that vram serve's sh hands a program the
 * very same list: checked by running the line through /bin/sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/lscmd.h"

/* text split; the words joined by '|' */
static void split_is(const char *text, const char *want)
{
    struct lscmd c;
    assert_int_equal(lscmd_split(text, &c), 0);
    char got[1024] = "";
    for (size_t i = 0; i < c.argc; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s", i ? "|" : "", c.argv[i]);
    assert_string_equal(got, want);
    lscmd_free(&c);
}

static void words_as_llama_swap_splits_them(void **state)
{
    (void)state;
    split_is("llama-server --port ${PORT} -m /m/a.gguf", "llama-server|--port|${PORT}|-m|/m/a.gguf");
    split_is("  a\t b\n c  ", "a|b|c");
    split_is("a 'b c' \"d e\" f'g h'i", "a|b c|d e|fg hi");
    split_is("a '' \"\"", "a||");
    split_is("a \\\"b \"c\\\"d\\\\e\\x\"", "a|\"b|c\"d\\e\\x");
    split_is("a 'b\\c'", "a|b\\c");
    split_is("a \\\n b", "a|b");
    split_is("a 'unclosed b", "a|unclosed b");
    /* comment lines out; a line's closing backslash a blank */
    split_is("# a comment\nllama-server \\\n  --jinja\n  # another\n  -c 4096", "llama-server|--jinja|-c|4096");
    split_is("", "");
    split_is("# only\n", "");
}

static void nothing_is_a_shell(void **state)
{
    (void)state;
    split_is("srv; touch /tmp/x", "srv;|touch|/tmp/x");
    split_is("srv $(id) `id` $HOME ~ a|b >out &", "srv|$(id)|`id`|$HOME|~|a|b|>out|&");
}

/* The words through `sh -c "exec printf '%s\0' WORDS..."`, as vram serve
 * runs a command: what printf was handed, NUL-separated. */
static size_t through_sh(const struct lscmd *words, char *out, size_t len)
{
    struct lscmd c = {0};
    c.argc = words->argc + 2;
    c.argv = calloc(c.argc + 1, sizeof *c.argv);
    assert_non_null(c.argv);
    c.argv[0] = "printf";
    c.argv[1] = "%s\\000";
    for (size_t i = 0; i < words->argc; i++)
        c.argv[2 + i] = words->argv[i];
    char *line = lscmd_join(&c);
    free(c.argv);
    assert_non_null(line);
    for (const char *p = line; *p; p++) /* an INI reader would cut the rest */
        if (*p == ';')
            assert_true(p == line || (p[-1] != ' ' && p[-1] != '\t'));
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "exec %s", line);
    free(line);
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    size_t n = 0;
    for (ssize_t r; n < len && (r = read(fd[0], out + n, len - n)) > 0;)
        n += (size_t)r;
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    return n;
}

static void written_back_the_same_words(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "llama-server --port 8080 -m /models/a.gguf --alias x:y,z@1+2=3%",
        "srv ';' '$(touch /tmp/lscmd-pwned)' '`touch /tmp/lscmd-pwned`' '$HOME' '~' 'a|b' '>o' '&'",
        "srv 'it'\"'\"'s' 'a ; b' 'a;b' '#x' 'x #y' '' 'tab\there' 'back\\\\slash' '\"q\"'",
        "'A=b' srv 'exec' '!' '{' 'if'",
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct lscmd c;
        assert_int_equal(lscmd_split(cases[k], &c), 0);
        char got[4096], want[4096];
        size_t n = through_sh(&c, got, sizeof got), m = 0;
        for (size_t i = 0; i < c.argc; i++) {
            size_t l = strlen(c.argv[i]) + 1;
            memcpy(want + m, c.argv[i], l);
            m += l;
        }
        assert_int_equal(n, m);
        assert_memory_equal(got, want, m);
        lscmd_free(&c);
    }
    assert_int_equal(access("/tmp/lscmd-pwned", F_OK), -1);
}

static void port_stays_bare(void **state)
{
    (void)state;
    struct lscmd c;
    assert_int_equal(lscmd_split("srv --port ${PORT} --host=127.0.0.1:${PORT} 'a b${PORT}'", &c), 0);
    char *line = lscmd_join(&c);
    assert_string_equal(line, "srv --port ${PORT} --host=127.0.0.1:${PORT} 'a b${PORT}'");
    free(line);
    lscmd_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(words_as_llama_swap_splits_them),
        cmocka_unit_test(nothing_is_a_shell),
        cmocka_unit_test(written_back_the_same_words),
        cmocka_unit_test(port_stays_bare),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
