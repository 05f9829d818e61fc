/* textsafe: what another party wrote, made safe for a terminal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "core/textsafe.h"

static void check(const char *in, const char *want)
{
    char buf[256], out[256];
    snprintf(buf, sizeof buf, "%s", in);
    assert_string_equal(textsafe(buf), want);
    assert_string_equal(textsafe_copy(in, strlen(in), out, sizeof out), want);
}

static void controls_become_question_marks(void **state)
{
    (void)state;
    check("\033[2J\033[H", "?[2J?[H"); /* clear the screen, home */
    check("a\rb\bc\ad\x7f", "a?b?c?d?");
    check("tab\there\nline", "tab?here?line");
    check("\xc2\x9b" "31m", "?31m");    /* CSI as a C1 control in UTF-8 */
    check("\x9b" "31m", "?31m");        /* and as a bare 8-bit byte */
    check("\xe2\x80\xae" "gpj.exe", "?gpj.exe"); /* right-to-left override */
    check("\xe2\x81\xa6x\xe2\x81\xa9", "?x?");  /* isolates */
}

static void text_stays(void **state)
{
    (void)state;
    check("python3 -m vllm.entrypoints", "python3 -m vllm.entrypoints");
    check("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80");
    check("", "");
}

static void not_utf8_is_no_text(void **state)
{
    (void)state;
    check("\xc0\xaf", "??");         /* overlong '/' */
    check("\xed\xa0\x80", "???");    /* a surrogate */
    check("\xf4\x90\x80\x80", "????"); /* past U+10FFFF */
    check("\xe6\x97", "??");          /* cut short */
    check("\xff\xfe", "??");
}

static void copies_fit_and_stop(void **state)
{
    (void)state;
    char out[6];
    /* a character is never cut: "é" would need two bytes where one is left */
    assert_string_equal(textsafe_copy("abcd\xc3\xa9", 6, out, sizeof out), "abcd");
    assert_string_equal(textsafe_copy("ab\0cd", 5, out, sizeof out), "ab");
    assert_string_equal(textsafe_copy("abcdef", 3, out, sizeof out), "abc");
    char one[1];
    assert_string_equal(textsafe_copy("abc", 3, one, sizeof one), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(controls_become_question_marks),
        cmocka_unit_test(text_stays),
        cmocka_unit_test(not_utf8_is_no_text),
        cmocka_unit_test(copies_fit_and_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
