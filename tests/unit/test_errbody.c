/* The error bodies: each dialect, read back with jansson as a client
 * would (which route speaks which: test_routes.c); messages with quotes, control characters and invalid
 * UTF-8 (a model's log line may hold any bytes) stay JSON; a message
 * longer than the buffer is cut, still JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <string.h>

#include "http/errbody.h"

static json_t *render(enum errbody_dialect d, enum errbody_kind k, const char *msg, size_t len)
{
    char buf[2048];
    size_t n = errbody_render(d, k, msg, buf, len);
    assert_int_equal(n, strlen(buf));
    assert_true(n < len);
    json_error_t e;
    json_t *j = json_loadb(buf, n, 0, &e);
    assert_non_null(j);
    return j;
}

static void plain_is_a_string(void **st)
{
    (void)st;
    json_t *j = render(ERRBODY_PLAIN, ERRBODY_NO_MODEL, "no model 'x' here", 1024);
    assert_string_equal(json_string_value(json_object_get(j, "error")), "no model 'x' here");
    json_decref(j);
}

static void openai_has_type_and_code(void **st)
{
    (void)st;
    json_t *j = render(ERRBODY_OPENAI, ERRBODY_NO_MODEL, "gone", 1024);
    json_t *e = json_object_get(j, "error");
    assert_string_equal(json_string_value(json_object_get(e, "message")), "gone");
    assert_string_equal(json_string_value(json_object_get(e, "type")), "not_found_error");
    assert_string_equal(json_string_value(json_object_get(e, "code")), "model_not_found");
    assert_true(json_is_null(json_object_get(e, "param")));
    json_decref(j);
    j = render(ERRBODY_OPENAI, ERRBODY_BAD_REQUEST, "bad", 1024);
    e = json_object_get(j, "error");
    assert_string_equal(json_string_value(json_object_get(e, "type")), "invalid_request_error");
    assert_true(json_is_null(json_object_get(e, "code")));
    json_decref(j);
    assert_int_equal(errbody_status(ERRBODY_UNAVAILABLE), 503);
    assert_int_equal(errbody_status(ERRBODY_BACKEND), 502);
    assert_int_equal(errbody_status(ERRBODY_HEADERS_TOO_BIG), 431);
}

static void any_bytes_stay_json(void **st)
{
    (void)st;
    const char *msg = "a \"quote\", a \\ and\ttab\n\x01, bad \xff\xc0\x80 and \xe2\x82 cut, "
                      "good \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
    json_t *j = render(ERRBODY_PLAIN, ERRBODY_BACKEND, msg, 1024);
    const char *got = json_string_value(json_object_get(j, "error"));
    assert_non_null(strstr(got, "a \"quote\", a \\ and\ttab\n\x01, bad "));
    assert_non_null(strstr(got, "good \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));
    json_decref(j);
}

static void long_messages_are_cut(void **st)
{
    (void)st;
    char msg[4000];
    memset(msg, 'x', sizeof msg - 1);
    msg[sizeof msg - 1] = '\0';
    msg[200] = '"'; /* an escape across the cut */
    for (size_t len = 128; len < 400; len += 7) {
        json_decref(render(ERRBODY_OPENAI, ERRBODY_HEADERS_TOO_BIG, msg, len));
        json_decref(render(ERRBODY_PLAIN, ERRBODY_HEADERS_TOO_BIG, msg, len));
    }
    json_decref(render(ERRBODY_OPENAI, ERRBODY_INTERNAL, NULL, 128));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_is_a_string),
        cmocka_unit_test(openai_has_type_and_code),
        cmocka_unit_test(any_bytes_stay_json),
        cmocka_unit_test(long_messages_are_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
