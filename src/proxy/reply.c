/* reply: a backend's answer in the client's API.
 *
 * Streamed answers are cut into events by sse.c, so that a JSON object
 * split across reads (or several in one read) is seen whole; each event
 * becomes text, thinking or tool calls, written out in the client's format
 * at once. OpenAI streams tool calls in pieces (the arguments a string in
 * fragments); Ollama sends each whole, its arguments an object: pieces are
 * gathered and given to an Ollama client when the backend finishes. An
 * answer that is not streamed (or not as asked: JSON where a stream was
 * asked, an error) is read whole, up to TRANSLATE_MAX_WHOLE, and goes
 * through the same steps. */
#include "proxy/reply.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "app/render_json.h"
#include "proxy/translate.h"

void reply_time(uint64_t wall_ms, char *out, size_t len)
{
    time_t s = (time_t)(wall_ms / 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    char day[40];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, len, "%s.%03uZ", day, (unsigned)(wall_ms % 1000));
}

void reply_init(struct reply *r, enum reply_fmt from, enum reply_fmt to, bool stream,
                const char *model, uint64_t wall_ms, uint64_t id)
{
    memset(r, 0, sizeof *r);
    r->from = from;
    r->to = to;
    r->stream = stream;
    snprintf(r->model, sizeof r->model, "%s", model);
    snprintf(r->id, sizeof r->id, "%s-vram-%llu", to == REPLY_OPENAI_CHAT ? "chatcmpl" : "cmpl",
             (unsigned long long)id);
    r->wall_ms = wall_ms;
    r->prompt_tokens = r->completion_tokens = -1;
    r->prompt_ms = r->predicted_ms = -1;
    r->acc = evbuffer_new();
    r->text = evbuffer_new();
    r->think = evbuffer_new();
    r->calls = json_array();
    sse_init(&r->sse, from != REPLY_OPENAI_CHAT && from != REPLY_OPENAI_TEXT);
}

void reply_free(struct reply *r)
{
    sse_free(&r->sse);
    if (r->acc)
        evbuffer_free(r->acc);
    if (r->text)
        evbuffer_free(r->text);
    if (r->think)
        evbuffer_free(r->think);
    for (unsigned i = 0; i < r->nparts; i++)
        if (r->part[i].args)
            evbuffer_free(r->part[i].args);
    json_decref(r->calls);
    memset(r, 0, sizeof *r);
}

static bool to_ollama(const struct reply *r)
{
    return r->to == REPLY_OLLAMA_CHAT || r->to == REPLY_OLLAMA_GENERATE ||
           r->to == REPLY_OLLAMA_EMBED || r->to == REPLY_OLLAMA_EMBEDDINGS;
}

static bool embedding(enum reply_fmt f)
{
    return f == REPLY_OPENAI_EMBED || f == REPLY_OLLAMA_EMBED || f == REPLY_OLLAMA_EMBEDDINGS;
}

const char *reply_head(struct reply *r, int status, const char *content_type)
{
    r->status = status;
    r->failed = status >= 400;
    bool streamed = content_type && (!strncasecmp(content_type, "text/event-stream", 17) ||
                                     !strncasecmp(content_type, "application/x-ndjson", 20));
    r->whole = r->failed || !streamed || embedding(r->from);
    if (r->stream && !r->failed && !embedding(r->to))
        return to_ollama(r) ? "application/x-ndjson" : "text/event-stream";
    return "application/json";
}

static void put_json(struct evbuffer *out, json_t *j, const char *before, const char *after)
{
    char *s = json_dumps(j, JSON_COMPACT | RENDER_JSON_REALS);
    if (s) {
        evbuffer_add_printf(out, "%s%s%s", before, s, after);
        free(s);
    }
    json_decref(j);
}

/* OpenAI's word for an HTTP status, as the SDKs read error.type. */
static const char *error_type(int status)
{
    return status == 401   ? "authentication_error"
           : status == 403 ? "permission_error"
           : status == 404 ? "not_found_error"
           : status == 429 ? "rate_limit_error"
           : status >= 500 ? "server_error"
                           : "invalid_request_error";
}

/* An error, in the client's format: Ollama's {"error": "text"}, OpenAI's
 * {"error": {"message", "type", "code"}}; in a stream, as its last event. */
static void out_error(struct reply *r, const char *msg, struct evbuffer *out)
{
    if (r->errored)
        return;
    r->errored = true;
    int status = r->status >= 400 ? r->status : 500;
    if (to_ollama(r)) {
        put_json(out, json_pack("{s:s}", "error", msg), "", r->stream ? "\n" : "");
        return;
    }
    json_t *e = json_pack("{s:{s:s, s:s, s:n}}", "error", "message", msg, "type",
                          error_type(status), "code");
    put_json(out, e, r->stream && !r->failed ? "data: " : "",
             r->stream && !r->failed ? "\n\n" : "");
}

/* ---- the common form, out to the client ---- */

static json_t *ollama_calls(json_t *calls)
{
    json_t *a = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(calls, i, c)
    {
        json_t *f = json_object_get(c, "function");
        const char *args = json_string_value(json_object_get(f, "arguments"));
        json_t *obj = args ? json_loads(args, JSON_DECODE_ANY, NULL) : NULL;
        if (!json_is_object(obj)) { /* not an object: Ollama's clients want one */
            json_decref(obj);
            obj = json_object();
        }
        const char *name = json_string_value(json_object_get(f, "name"));
        json_array_append_new(
            a, json_pack("{s:{s:s, s:o}}", "function", "name", name ? name : "", "arguments", obj));
    }
    return a;
}

static void stamp_ollama(struct reply *r, json_t *j)
{
    char t[48];
    reply_time(r->wall_ms, t, sizeof t);
    json_object_set_new(j, "model", json_string(r->model));
    json_object_set_new(j, "created_at", json_string(t));
}

static json_t *openai_chunk(struct reply *r, json_t *delta, const char *finish)
{
    bool chat = r->to == REPLY_OPENAI_CHAT;
    json_t *choice = json_pack("{s:i}", "index", 0);
    if (chat)
        json_object_set_new(choice, "delta", delta ? delta : json_object());
    else {
        json_t *text = delta ? json_object_get(delta, "content") : NULL;
        json_object_set_new(choice, "text", text ? json_incref(text) : json_string(""));
        json_object_set_new(choice, "logprobs", json_null());
        json_decref(delta);
    }
    json_object_set_new(choice, "finish_reason", finish ? json_string(finish) : json_null());
    return json_pack("{s:s, s:s, s:I, s:s, s:[o]}", "id", r->id, "object",
                     chat ? "chat.completion.chunk" : "text_completion", "created",
                     (json_int_t)(r->wall_ms / 1000), "model", r->model, "choices", choice);
}

/* Text, thinking and tool calls (OpenAI's form, complete), as they come. */
static void out_delta(struct reply *r, const char *text, size_t tlen, const char *think,
                      size_t klen, json_t *calls, struct evbuffer *out)
{
    size_t ncalls = calls ? json_array_size(calls) : 0;
    if (!tlen && !klen && !ncalls)
        return;
    if (!r->stream) {
        evbuffer_add(r->text, text, tlen);
        evbuffer_add(r->think, think, klen);
        for (size_t i = 0; i < ncalls; i++)
            json_array_append(r->calls, json_array_get(calls, i));
        return;
    }
    if (to_ollama(r)) {
        json_t *j = json_object();
        stamp_ollama(r, j);
        if (r->to == REPLY_OLLAMA_CHAT) {
            json_t *m = json_pack("{s:s, s:s%}", "role", "assistant", "content", text, tlen);
            if (klen)
                json_object_set_new(m, "thinking", json_stringn(think, klen));
            if (ncalls)
                json_object_set_new(m, "tool_calls", ollama_calls(calls));
            json_object_set_new(j, "message", m);
        } else {
            json_object_set_new(j, "response", json_stringn(text, tlen));
            if (klen)
                json_object_set_new(j, "thinking", json_stringn(think, klen));
        }
        json_object_set_new(j, "done", json_false());
        put_json(out, j, "", "\n");
        return;
    }
    json_t *delta = json_object();
    if (!r->began && r->to == REPLY_OPENAI_CHAT)
        json_object_set_new(delta, "role", json_string("assistant"));
    r->began = true;
    if (tlen || !ncalls)
        json_object_set_new(delta, "content", json_stringn(text, tlen));
    if (klen)
        json_object_set_new(delta, "reasoning_content", json_stringn(think, klen));
    if (ncalls) {
        json_t *a = json_array();
        for (size_t i = 0; i < ncalls; i++) {
            json_t *c = json_deep_copy(json_array_get(calls, i));
            json_object_set_new(c, "index", json_integer(r->sent_calls++));
            json_array_append_new(a, c);
        }
        json_object_set_new(delta, "tool_calls", a);
        json_array_extend(r->calls, calls); /* for the finish reason */
    }
    put_json(out, openai_chunk(r, delta, NULL), "data: ", "\n\n");
}

/* Ollama's done_reason from OpenAI's finish_reason, and back. */
static const char *finish_word(const struct reply *r)
{
    const char *f = r->finish;
    if (to_ollama(r))
        return !strcmp(f, "length") ? "length" : "stop";
    if (json_array_size(r->calls) && r->to == REPLY_OPENAI_CHAT)
        return "tool_calls";
    return !strcmp(f, "length") ? "length" : "stop";
}

static void put_counts(struct reply *r, json_t *j, uint64_t t0_us, uint64_t load_us,
                       uint64_t sent_us, uint64_t now_us)
{
    uint64_t first = r->first_us ? r->first_us : now_us;
    uint64_t prompt_ns = r->prompt_ns        ? r->prompt_ns
                         : r->prompt_ms >= 0 ? (uint64_t)(r->prompt_ms * 1e6)
                                             : (first > sent_us ? first - sent_us : 0) * 1000;
    uint64_t eval_ns = r->eval_ns             ? r->eval_ns
                       : r->predicted_ms >= 0 ? (uint64_t)(r->predicted_ms * 1e6)
                                              : (now_us > first ? now_us - first : 0) * 1000;
    json_object_set_new(j, "total_duration", json_integer((json_int_t)((now_us - t0_us) * 1000)));
    json_object_set_new(j, "load_duration", json_integer((json_int_t)(load_us * 1000)));
    if (r->prompt_tokens >= 0)
        json_object_set_new(j, "prompt_eval_count", json_integer(r->prompt_tokens));
    json_object_set_new(j, "prompt_eval_duration", json_integer((json_int_t)prompt_ns));
    if (r->completion_tokens >= 0)
        json_object_set_new(j, "eval_count", json_integer(r->completion_tokens));
    json_object_set_new(j, "eval_duration", json_integer((json_int_t)eval_ns));
}

static json_t *openai_usage(const struct reply *r)
{
    long long p = r->prompt_tokens < 0 ? 0 : r->prompt_tokens;
    long long c = r->completion_tokens < 0 ? 0 : r->completion_tokens;
    return json_pack("{s:I, s:I, s:I}", "prompt_tokens", (json_int_t)p, "completion_tokens",
                     (json_int_t)c, "total_tokens", (json_int_t)(p + c));
}

/* The last of a chat or a completion: the finish reason and the counts. */
static void out_final(struct reply *r, uint64_t t0_us, uint64_t load_us, uint64_t sent_us,
                      uint64_t now_us, struct evbuffer *out)
{
    const char *why = finish_word(r);
    if (to_ollama(r)) {
        json_t *j = json_object();
        stamp_ollama(r, j);
        size_t tl = r->stream ? 0 : evbuffer_get_length(r->text);
        size_t kl = r->stream ? 0 : evbuffer_get_length(r->think);
        const char *text = tl ? (const char *)evbuffer_pullup(r->text, -1) : "";
        const char *think = kl ? (const char *)evbuffer_pullup(r->think, -1) : "";
        if (r->to == REPLY_OLLAMA_CHAT) {
            json_t *m = json_pack("{s:s, s:s%}", "role", "assistant", "content", text, tl);
            if (kl)
                json_object_set_new(m, "thinking", json_stringn(think, kl));
            if (!r->stream && json_array_size(r->calls))
                json_object_set_new(m, "tool_calls", ollama_calls(r->calls));
            json_object_set_new(j, "message", m);
        } else {
            json_object_set_new(j, "response", json_stringn(text, tl));
            if (kl)
                json_object_set_new(j, "thinking", json_stringn(think, kl));
        }
        json_object_set_new(j, "done", json_true());
        json_object_set_new(j, "done_reason", json_string(why));
        put_counts(r, j, t0_us, load_us, sent_us, now_us);
        put_json(out, j, "", r->stream ? "\n" : "");
        return;
    }
    if (r->stream) {
        put_json(out, openai_chunk(r, NULL, why), "data: ", "\n\n");
        if (r->usage) {
            json_t *u =
                json_pack("{s:s, s:s, s:I, s:s, s:[], s:o}", "id", r->id, "object",
                          r->to == REPLY_OPENAI_CHAT ? "chat.completion.chunk" : "text_completion",
                          "created", (json_int_t)(r->wall_ms / 1000), "model", r->model, "choices",
                          "usage", openai_usage(r));
            put_json(out, u, "data: ", "\n\n");
        }
        evbuffer_add(out, "data: [DONE]\n\n", 14);
        return;
    }
    size_t tl = evbuffer_get_length(r->text), kl = evbuffer_get_length(r->think);
    json_t *text = json_stringn(tl ? (const char *)evbuffer_pullup(r->text, -1) : "", tl);
    json_t *choice;
    if (r->to == REPLY_OPENAI_CHAT) {
        json_t *m = json_pack("{s:s, s:o}", "role", "assistant", "content", text);
        if (kl)
            json_object_set_new(m, "reasoning_content",
                                json_stringn((const char *)evbuffer_pullup(r->think, -1), kl));
        if (json_array_size(r->calls))
            json_object_set(m, "tool_calls", r->calls);
        choice = json_pack("{s:i, s:o, s:s}", "index", 0, "message", m, "finish_reason", why);
    } else {
        choice = json_pack("{s:i, s:o, s:n, s:s}", "index", 0, "text", text, "logprobs",
                           "finish_reason", why);
    }
    json_t *j = json_pack("{s:s, s:s, s:I, s:s, s:[o], s:o}", "id", r->id, "object",
                          r->to == REPLY_OPENAI_CHAT ? "chat.completion" : "text_completion",
                          "created", (json_int_t)(r->wall_ms / 1000), "model", r->model, "choices",
                          choice, "usage", openai_usage(r));
    put_json(out, j, "", "");
}

/* ---- the backend's events, in ---- */

static void first_text(struct reply *r, uint64_t now_us)
{
    if (!r->first_us)
        r->first_us = now_us ? now_us : 1;
}

/* OpenAI's tool call pieces into part[], by index. */
static void gather_calls(struct reply *r, json_t *calls)
{
    size_t i;
    json_t *c;
    json_array_foreach(calls, i, c)
    {
        json_int_t k = json_integer_value(json_object_get(c, "index"));
        if (!json_is_integer(json_object_get(c, "index")))
            k = (json_int_t)i;
        if (k < 0 || k >= REPLY_MAX_CALLS)
            continue;
        while (r->nparts <= (unsigned)k) {
            r->part[r->nparts].args = evbuffer_new();
            r->nparts++;
        }
        json_t *f = json_object_get(c, "function");
        const char *id = json_string_value(json_object_get(c, "id"));
        const char *name = json_string_value(json_object_get(f, "name"));
        const char *args = json_string_value(json_object_get(f, "arguments"));
        if (id)
            snprintf(r->part[k].id, sizeof r->part[k].id, "%s", id);
        if (name) /* whole in its first piece, as every server sends it */
            snprintf(r->part[k].name, sizeof r->part[k].name, "%s", name);
        if (args && r->part[k].args &&
            evbuffer_get_length(r->part[k].args) + strlen(args) < SSE_MAX_EVENT)
            evbuffer_add(r->part[k].args, args, strlen(args));
    }
}

/* The gathered pieces, whole, in OpenAI's form. */
static json_t *gathered(struct reply *r)
{
    json_t *a = json_array();
    for (unsigned k = 0; k < r->nparts; k++) {
        size_t n = r->part[k].args ? evbuffer_get_length(r->part[k].args) : 0;
        const char *args = n ? (const char *)evbuffer_pullup(r->part[k].args, -1) : "";
        char id[80];
        if (r->part[k].id[0])
            snprintf(id, sizeof id, "%s", r->part[k].id);
        else
            snprintf(id, sizeof id, "call_%u", k);
        json_array_append_new(a, json_pack("{s:s, s:s, s:{s:s, s:s%}}", "id", id, "type",
                                           "function", "function", "name", r->part[k].name,
                                           "arguments", n ? args : "{}", n ? n : 2));
    }
    return a;
}

/* Ollama's tool calls (arguments an object) in OpenAI's form. */
static json_t *openai_calls(struct reply *r, json_t *calls)
{
    json_t *a = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(calls, i, c)
    {
        json_t *f = json_object_get(c, "function");
        json_t *args = json_object_get(f, "arguments");
        char *text = args ? json_dumps(args, JSON_COMPACT | RENDER_JSON_REALS | JSON_ENCODE_ANY) : NULL;
        const char *name = json_string_value(json_object_get(f, "name"));
        char id[32];
        snprintf(id, sizeof id, "call_%zu", json_array_size(r->calls) + i);
        json_array_append_new(a, json_pack("{s:s, s:s, s:{s:s, s:s}}", "id", id, "type", "function",
                                           "function", "name", name ? name : "", "arguments",
                                           text ? text : "{}"));
        free(text);
    }
    return a;
}

static void count(long long *to, json_t *v)
{
    if (json_is_integer(v) && json_integer_value(v) >= 0)
        *to = json_integer_value(v);
}

static void from_openai(struct reply *r, json_t *j, uint64_t now_us, struct evbuffer *out)
{
    json_t *err = json_object_get(j, "error");
    if (err) {
        const char *m = json_string_value(json_object_get(err, "message"));
        out_error(r,
                  m                     ? m
                  : json_is_string(err) ? json_string_value(err)
                                        : "the backend failed",
                  out);
        return;
    }
    json_t *u = json_object_get(j, "usage");
    if (json_is_object(u)) {
        count(&r->prompt_tokens, json_object_get(u, "prompt_tokens"));
        count(&r->completion_tokens, json_object_get(u, "completion_tokens"));
    }
    json_t *tm = json_object_get(j, "timings"); /* llama-server's */
    if (json_is_object(tm)) {
        json_t *p = json_object_get(tm, "prompt_ms"), *e = json_object_get(tm, "predicted_ms");
        if (json_is_number(p))
            r->prompt_ms = json_number_value(p);
        if (json_is_number(e))
            r->predicted_ms = json_number_value(e);
    }
    json_t *ch = json_array_get(json_object_get(j, "choices"), 0);
    if (!ch)
        return;
    json_t *d = json_object_get(ch, "delta");
    if (!d)
        d = json_object_get(ch, "message");
    json_t *text = d ? json_object_get(d, "content") : json_object_get(ch, "text");
    json_t *think = d ? json_object_get(d, "reasoning_content") : NULL;
    if (d && !think)
        think = json_object_get(d, "reasoning"); /* vLLM's newer name */
    json_t *calls = d ? json_object_get(d, "tool_calls") : NULL;
    size_t tl = json_string_length(text), kl = json_string_length(think);
    if (tl || kl)
        first_text(r, now_us);
    if (json_is_array(calls))
        gather_calls(r, calls);
    out_delta(r, tl ? json_string_value(text) : "", tl, kl ? json_string_value(think) : "", kl,
              NULL, out);
    const char *f = json_string_value(json_object_get(ch, "finish_reason"));
    if (f) {
        snprintf(r->finish, sizeof r->finish, "%s", f);
        r->finished = true;
    }
}

static void from_ollama(struct reply *r, json_t *j, uint64_t now_us, struct evbuffer *out)
{
    json_t *err = json_object_get(j, "error");
    if (json_is_string(err)) {
        out_error(r, json_string_value(err), out);
        return;
    }
    json_t *m = json_object_get(j, "message");
    json_t *text = m ? json_object_get(m, "content") : json_object_get(j, "response");
    json_t *think = m ? json_object_get(m, "thinking") : json_object_get(j, "thinking");
    json_t *calls = m ? json_object_get(m, "tool_calls") : NULL;
    size_t tl = json_string_length(text), kl = json_string_length(think);
    if (tl || kl)
        first_text(r, now_us);
    json_t *oc = json_array_size(calls) ? openai_calls(r, calls) : NULL;
    out_delta(r, tl ? json_string_value(text) : "", tl, kl ? json_string_value(think) : "", kl, oc,
              out);
    json_decref(oc);
    if (json_is_true(json_object_get(j, "done"))) {
        const char *f = json_string_value(json_object_get(j, "done_reason"));
        snprintf(r->finish, sizeof r->finish, "%s", f ? f : "stop");
        r->finished = true;
        count(&r->prompt_tokens, json_object_get(j, "prompt_eval_count"));
        count(&r->completion_tokens, json_object_get(j, "eval_count"));
        json_t *p = json_object_get(j, "prompt_eval_duration"),
               *e = json_object_get(j, "eval_duration");
        if (json_is_integer(p) && json_integer_value(p) > 0)
            r->prompt_ns = (uint64_t)json_integer_value(p);
        if (json_is_integer(e) && json_integer_value(e) > 0)
            r->eval_ns = (uint64_t)json_integer_value(e);
    }
}

struct feed {
    struct reply *r;
    uint64_t now_us;
    struct evbuffer *out;
};

static void on_event(void *arg, const char *data, size_t len)
{
    struct feed *f = arg;
    struct reply *r = f->r;
    if (r->errored)
        return;
    if (len == 6 && !memcmp(data, "[DONE]", 6)) {
        r->finished = true;
        return;
    }
    json_t *j = json_loadb(data, len, 0, NULL);
    if (!json_is_object(j)) {
        json_decref(j);
        return; /* not JSON: a keep-alive or a stray line, as clients skip them */
    }
    if (r->from == REPLY_OPENAI_CHAT || r->from == REPLY_OPENAI_TEXT)
        from_openai(r, j, f->now_us, f->out);
    else
        from_ollama(r, j, f->now_us, f->out);
    json_decref(j);
}

int reply_body(struct reply *r, const char *data, size_t len, uint64_t now_us, struct evbuffer *out)
{
    if (r->broken)
        return -1;
    if (r->whole) {
        if (evbuffer_get_length(r->acc) + len > TRANSLATE_MAX_WHOLE) {
            r->broken = true;
            return -1;
        }
        evbuffer_add(r->acc, data, len);
        return 0;
    }
    struct feed f = {r, now_us, out};
    if (sse_feed(&r->sse, data, len, on_event, &f) < 0) {
        r->broken = true;
        return -1;
    }
    return 0;
}

/* ---- whole answers ---- */

/* What a backend's error body says: OpenAI's error.message, Ollama's
 * error, FastAPI's detail, or its text. */
static void error_text(struct reply *r, char *msg, size_t len)
{
    size_t n = evbuffer_get_length(r->acc);
    const char *b = n ? (const char *)evbuffer_pullup(r->acc, -1) : "";
    json_t *j = json_loadb(b, n, 0, NULL);
    json_t *e = json_object_get(j, "error");
    const char *m =
        json_is_string(e) ? json_string_value(e) : json_string_value(json_object_get(e, "message"));
    if (!m)
        m = json_string_value(json_object_get(j, "message"));
    if (!m)
        m = json_string_value(json_object_get(j, "detail"));
    if (m)
        snprintf(msg, len, "%s", m);
    else if (n)
        snprintf(msg, len, "%.*s", (int)(n > 400 ? 400 : n), b);
    else
        snprintf(msg, len, "the backend answered %d", r->status);
    json_decref(j);
    size_t l = strlen(msg);
    while (l && (msg[l - 1] == '\n' || msg[l - 1] == '\r'))
        msg[--l] = '\0';
}

static const char b64chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* A vector of numbers as OpenAI's base64 (float32, little-endian). */
static json_t *base64_floats(json_t *v)
{
    size_t n = json_array_size(v), bytes = n * 4;
    unsigned char *raw = malloc(bytes + 3);
    char *s = malloc((bytes + 2) / 3 * 4 + 1);
    if (!raw || !s) {
        free(raw);
        free(s);
        return json_string("");
    }
    for (size_t i = 0; i < n; i++) {
        float f = (float)json_number_value(json_array_get(v, i));
        uint32_t u;
        memcpy(&u, &f, 4);
        for (int b = 0; b < 4; b++)
            raw[i * 4 + (size_t)b] = (unsigned char)(u >> (8 * b));
    }
    size_t o = 0;
    for (size_t i = 0; i < bytes; i += 3) {
        uint32_t x = (uint32_t)raw[i] << 16;
        if (i + 1 < bytes)
            x |= (uint32_t)raw[i + 1] << 8;
        if (i + 2 < bytes)
            x |= raw[i + 2];
        s[o++] = b64chars[x >> 18 & 63];
        s[o++] = b64chars[x >> 12 & 63];
        s[o++] = i + 1 < bytes ? b64chars[x >> 6 & 63] : '=';
        s[o++] = i + 2 < bytes ? b64chars[x & 63] : '=';
    }
    json_t *j = json_stringn(s, o);
    free(raw);
    free(s);
    return j;
}

/* OpenAI's base64 embedding back to numbers (a backend that sent one). */
static json_t *floats_of_base64(const char *s)
{
    json_t *a = json_array();
    uint32_t acc = 0;
    int bits = 0;
    unsigned char b[4];
    int nb = 0;
    for (; *s && *s != '='; s++) {
        const char *c = strchr(b64chars, *s);
        if (!c || !*c)
            continue;
        acc = acc << 6 | (uint32_t)(c - b64chars);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            b[nb++] = (unsigned char)(acc >> bits);
            if (nb == 4) {
                uint32_t u =
                    b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
                float f;
                memcpy(&f, &u, 4);
                json_array_append_new(a, json_real(isfinite(f) ? f : 0));
                nb = 0;
            }
        }
    }
    return a;
}

static void out_embeddings(struct reply *r, json_t *j, uint64_t t0_us, uint64_t load_us,
                           uint64_t now_us, struct evbuffer *out)
{
    json_t *vecs = json_array();
    if (r->from == REPLY_OPENAI_EMBED) {
        size_t i;
        json_t *d;
        json_array_foreach(json_object_get(j, "data"), i, d)
        {
            json_t *e = json_object_get(d, "embedding");
            json_array_append_new(vecs, json_is_string(e) ? floats_of_base64(json_string_value(e))
                                                          : json_incref(e));
        }
        count(&r->prompt_tokens, json_object_get(json_object_get(j, "usage"), "prompt_tokens"));
    } else {
        json_t *e = json_object_get(j, "embeddings");
        if (!e && json_object_get(j, "embedding"))
            e = json_pack("[O]", json_object_get(j, "embedding"));
        else
            json_incref(e);
        json_decref(vecs);
        vecs = json_is_array(e) ? e : json_array();
        if (!json_is_array(e))
            json_decref(e);
        count(&r->prompt_tokens, json_object_get(j, "prompt_eval_count"));
    }
    json_t *o;
    if (r->to == REPLY_OLLAMA_EMBEDDINGS) {
        json_t *first = json_array_get(vecs, 0);
        o = json_pack("{s:O}", "embedding", first ? first : vecs);
    } else if (r->to == REPLY_OLLAMA_EMBED) {
        o = json_pack("{s:s, s:O, s:I, s:I}", "model", r->model, "embeddings", vecs,
                      "total_duration", (json_int_t)((now_us - t0_us) * 1000), "load_duration",
                      (json_int_t)(load_us * 1000));
        if (r->prompt_tokens >= 0)
            json_object_set_new(o, "prompt_eval_count", json_integer(r->prompt_tokens));
    } else {
        json_t *data = json_array();
        size_t i;
        json_t *v;
        json_array_foreach(vecs, i, v)
        {
            json_array_append_new(data, json_pack("{s:s, s:I, s:o}", "object", "embedding", "index",
                                                  (json_int_t)i, "embedding",
                                                  r->b64 ? base64_floats(v) : json_incref(v)));
        }
        long long p = r->prompt_tokens < 0 ? 0 : r->prompt_tokens;
        o = json_pack("{s:s, s:o, s:s, s:{s:I, s:I}}", "object", "list", "data", data, "model",
                      r->model, "usage", "prompt_tokens", (json_int_t)p, "total_tokens",
                      (json_int_t)p);
    }
    json_decref(vecs);
    put_json(out, o, "", "");
}

void reply_end(struct reply *r, uint64_t t0_us, uint64_t load_us, uint64_t sent_us, uint64_t now_us,
               struct evbuffer *out)
{
    if (r->broken)
        return;
    struct feed f = {r, now_us, out};
    if (!r->whole) {
        sse_end(&r->sse, on_event, &f);
    } else if (r->failed) {
        char msg[512];
        error_text(r, msg, sizeof msg);
        out_error(r, msg, out);
        return;
    } else {
        size_t n = evbuffer_get_length(r->acc);
        json_t *j = json_loadb(n ? (const char *)evbuffer_pullup(r->acc, -1) : "", n, 0, NULL);
        if (!json_is_object(j)) {
            json_decref(j);
            r->status = 502;
            out_error(r, "the backend's answer is not JSON", out);
            return;
        }
        if (embedding(r->to)) {
            out_embeddings(r, j, t0_us, load_us, now_us, out);
            json_decref(j);
            return;
        }
        first_text(r, now_us);
        on_event(&f, n ? (const char *)evbuffer_pullup(r->acc, -1) : "", n);
        json_decref(j);
    }
    if (r->errored)
        return;
    if (r->nparts) { /* OpenAI's pieces, whole now */
        json_t *calls = gathered(r);
        out_delta(r, "", 0, "", 0, calls, out);
        json_decref(calls);
    }
    out_final(r, t0_us, load_us, sent_us, now_us, out);
}
