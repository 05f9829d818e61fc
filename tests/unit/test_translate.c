/* The proxy's translation between OpenAI's and Ollama's APIs, as a client
 * sees it: events split anywhere across reads arrive whole (a CR LF cut
 * in two is one line end, data: lines join), an Ollama request reaches an
 * OpenAI backend with its options under OpenAI's names, and the answer
 * comes back as Ollama's lines with the backend's counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "http/sse.h"
#include "proxy/translate.h"

struct got {
    char ev[8][64];
    int n;
};

static void on_event(void *arg, const char *data, size_t len)
{
    struct got *g = arg;
    if (g->n < 8)
        snprintf(g->ev[g->n++], sizeof g->ev[0], "%.*s", (int)len, data);
}

static void test_sse_split_anywhere(void **state)
{
    (void)state;
    const char *text =
        ": comment\r\ndata: one\r\n\r\nevent: x\r\ndata:two\r\ndata: lines\n\ndata: [DONE]\r\n\r\n";
    size_t n = strlen(text);
    for (size_t cut = 0; cut <= n; cut++) {
        struct sse s;
        struct got g = {0};
        sse_init(&s, false);
        sse_feed(&s, text, cut, on_event, &g);
        sse_feed(&s, text + cut, n - cut, on_event, &g);
        sse_end(&s, on_event, &g);
        sse_free(&s);
        assert_int_equal(g.n, 3);
        assert_string_equal(g.ev[0], "one");
        assert_string_equal(g.ev[1], "two\nlines");
        assert_string_equal(g.ev[2], "[DONE]");
    }
}

static void test_ndjson_last_line_without_newline(void **state)
{
    (void)state;
    struct sse s;
    struct got g = {0};
    sse_init(&s, true);
    sse_feed(&s, "{\"a\":1}\r\n\n  \n{\"b\"", 17, on_event, &g);
    sse_feed(&s, ":2}", 3, on_event, &g);
    sse_end(&s, on_event, &g);
    sse_free(&s);
    assert_int_equal(g.n, 2);
    assert_string_equal(g.ev[1], "{\"b\":2}");
}

static void test_ollama_chat_to_openai(void **state)
{
    (void)state;
    json_t *body =
        json_loads("{\"model\":\"q:latest\",\"messages\":[{\"role\":\"user\",\"content\":"
                   "\"hi\",\"images\":[\"iVBORw0\"]}],\"options\":{\"num_predict\":5,"
                   "\"temperature\":0.2},\"format\":\"json\",\"keep_alive\":0}",
                   0, NULL);
    char uri[64];
    struct evbuffer *out = evbuffer_new();
    struct translate *t;
    assert_null(
        translate_request(TRANSLATE_OLLAMA_CHAT, body, "q", 1000, 1, uri, sizeof uri, out, &t));
    assert_string_equal(uri, "/v1/chat/completions");
    json_t *o =
        json_loadb((const char *)evbuffer_pullup(out, -1), evbuffer_get_length(out), 0, NULL);
    assert_string_equal(json_string_value(json_object_get(o, "model")), "q");
    assert_int_equal(json_integer_value(json_object_get(o, "max_tokens")), 5);
    assert_true(
        json_is_true(json_object_get(json_object_get(o, "stream_options"), "include_usage")));
    assert_null(json_object_get(o, "keep_alive"));
    json_t *part = json_array_get(
        json_object_get(json_array_get(json_object_get(o, "messages"), 0), "content"), 1);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(part, "image_url"), "url")),
        "data:image/png;base64,iVBORw0");
    json_decref(o);
    evbuffer_drain(out, evbuffer_get_length(out));
    assert_string_equal(translate_head(t, 200, "text/event-stream"), "application/x-ndjson");
    const char *ans =
        "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n"
        "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n"
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n\n"
        "data: [DONE]\n\n";
    assert_int_equal(translate_body(t, ans, strlen(ans), 50, out), 0);
    translate_end(t, 0, 10, 20, 100, out);
    char text[2048];
    snprintf(text, sizeof text, "%.*s", (int)evbuffer_get_length(out),
             (const char *)evbuffer_pullup(out, -1));
    char *nl = strchr(text, '\n');
    assert_non_null(nl);
    json_t *first = json_loadb(text, (size_t)(nl - text), 0, NULL);
    json_t *last = json_loads(nl + 1, JSON_DISABLE_EOF_CHECK, NULL);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(first, "message"), "content")), "Hi");
    assert_string_equal(json_string_value(json_object_get(first, "model")), "q:latest");
    assert_true(json_is_true(json_object_get(last, "done")));
    assert_string_equal(json_string_value(json_object_get(last, "done_reason")), "length");
    assert_int_equal(json_integer_value(json_object_get(last, "eval_count")), 1);
    assert_int_equal(json_integer_value(json_object_get(last, "prompt_eval_count")), 3);
    assert_int_equal(json_integer_value(json_object_get(last, "load_duration")), 10000);
    json_decref(first);
    json_decref(last);
    translate_free(t);
    evbuffer_free(out);
    json_decref(body);
}

static void test_openai_error_from_ollama(void **state)
{
    (void)state;
    json_t *body = json_loads(
        "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}", 0, NULL);
    char uri[64];
    struct evbuffer *out = evbuffer_new();
    struct translate *t;
    assert_null(
        translate_request(TRANSLATE_OPENAI_CHAT, body, "m", 1000, 1, uri, sizeof uri, out, &t));
    assert_string_equal(uri, "/api/chat");
    evbuffer_drain(out, evbuffer_get_length(out));
    translate_head(t, 404, "application/json");
    translate_body(t, "{\"error\":\"model not found\"}", 27, 1, out);
    translate_end(t, 0, 0, 0, 2, out);
    json_t *j =
        json_loadb((const char *)evbuffer_pullup(out, -1), evbuffer_get_length(out), 0, NULL);
    json_t *e = json_object_get(j, "error");
    assert_string_equal(json_string_value(json_object_get(e, "message")), "model not found");
    assert_string_equal(json_string_value(json_object_get(e, "type")), "not_found_error");
    json_decref(j);
    translate_free(t);
    evbuffer_free(out);
    json_decref(body);
}

static void test_openai_image_url_refused(void **state)
{
    (void)state;
    json_t *body =
        json_loads("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":"
                   "\"image_url\",\"image_url\":{\"url\":\"http://x/a.png\"}}]}]}",
                   0, NULL);
    char uri[64];
    struct evbuffer *out = evbuffer_new();
    struct translate *t;
    const char *why =
        translate_request(TRANSLATE_OPENAI_CHAT, body, "m", 1, 1, uri, sizeof uri, out, &t);
    assert_non_null(why);
    assert_non_null(strstr(why, "data: URLs"));
    assert_null(t);
    evbuffer_free(out);
    json_decref(body);
}

/* "stream": null is each API's default (Ollama: streamed, OpenAI: not), as both servers take it */
static void test_stream_null_is_the_default(void **state)
{
    (void)state;
    json_t *body = json_loads("{\"model\":\"m\",\"stream\":null,\"messages\":[{\"role\":"
                              "\"user\",\"content\":\"x\"}]}",
                              0, NULL);
    char uri[64];
    struct evbuffer *out = evbuffer_new();
    struct translate *t = NULL;
    assert_null(
        translate_request(TRANSLATE_OLLAMA_CHAT, body, "m", 1, 1, uri, sizeof uri, out, &t));
    json_t *o =
        json_loadb((const char *)evbuffer_pullup(out, -1), evbuffer_get_length(out), 0, NULL);
    assert_true(json_is_true(json_object_get(o, "stream")));
    json_decref(o);
    translate_free(t);
    evbuffer_drain(out, evbuffer_get_length(out));
    assert_null(
        translate_request(TRANSLATE_OPENAI_CHAT, body, "m", 1, 1, uri, sizeof uri, out, &t));
    o = json_loadb((const char *)evbuffer_pullup(out, -1), evbuffer_get_length(out), 0, NULL);
    assert_true(json_is_false(json_object_get(o, "stream")));
    json_decref(o);
    translate_free(t);
    evbuffer_free(out);
    json_decref(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sse_split_anywhere),
        cmocka_unit_test(test_ndjson_last_line_without_newline),
        cmocka_unit_test(test_ollama_chat_to_openai),
        cmocka_unit_test(test_openai_error_from_ollama),
        cmocka_unit_test(test_openai_image_url_refused),
        cmocka_unit_test(test_stream_null_is_the_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
