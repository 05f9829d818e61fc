/* translate: requests from one API to the other (the answers: reply.c).
 *
 * Ollama to OpenAI: /api/chat becomes /v1/chat/completions, its options
 * the request's own fields; /api/generate becomes a chat of one user
 * message (Ollama applies the model's template to a prompt; OpenAI's chat
 * route is where a backend does), or /v1/completions when it is raw or has
 * a suffix; /api/embed and /api/embeddings become /v1/embeddings. A
 * stream asks for the usage (stream_options.include_usage), for Ollama's
 * token counts. OpenAI to Ollama: the reverse, images from data: URLs.
 * Ollama streams unless told not to, OpenAI only when told to. */
#include "proxy/translate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/render_json.h"
#include "proxy/reply.h"

struct translate {
    struct reply r;
};

enum translate_route translate_route(const char *path, enum config_api api)
{
    if (api == CONFIG_API_OPENAI) {
        if (!strcmp(path, "/api/chat"))
            return TRANSLATE_OLLAMA_CHAT;
        if (!strcmp(path, "/api/generate"))
            return TRANSLATE_OLLAMA_GENERATE;
        if (!strcmp(path, "/api/embed"))
            return TRANSLATE_OLLAMA_EMBED;
        if (!strcmp(path, "/api/embeddings"))
            return TRANSLATE_OLLAMA_EMBEDDINGS;
    } else if (api == CONFIG_API_OLLAMA) {
        if (!strcmp(path, "/v1/chat/completions"))
            return TRANSLATE_OPENAI_CHAT;
        if (!strcmp(path, "/v1/completions"))
            return TRANSLATE_OPENAI_COMPLETIONS;
        if (!strcmp(path, "/v1/embeddings"))
            return TRANSLATE_OPENAI_EMBEDDINGS;
    }
    return TRANSLATE_NONE;
}

bool translate_load_only(enum translate_route route, json_t *body)
{
    if (route == TRANSLATE_OLLAMA_CHAT)
        return json_array_size(json_object_get(body, "messages")) == 0;
    if (route == TRANSLATE_OLLAMA_GENERATE)
        return !json_string_length(json_object_get(body, "prompt")) &&
               !json_array_size(json_object_get(body, "images"));
    return false;
}

void translate_load_reply(enum translate_route route, const char *model, bool unload,
                          uint64_t wall_ms, struct evbuffer *out)
{
    char t[48];
    reply_time(wall_ms, t, sizeof t);
    json_t *j = json_pack("{s:s, s:s}", "model", model, "created_at", t);
    if (route == TRANSLATE_OLLAMA_CHAT)
        json_object_set_new(j, "message",
                            json_pack("{s:s, s:s}", "role", "assistant", "content", ""));
    else
        json_object_set_new(j, "response", json_string(""));
    json_object_set_new(j, "done", json_true());
    json_object_set_new(j, "done_reason", json_string(unload ? "unload" : "load"));
    char *s = json_dumps(j, JSON_COMPACT | RENDER_JSON_REALS);
    if (s)
        evbuffer_add(out, s, strlen(s));
    free(s);
    json_decref(j);
}

/* ---- Ollama to OpenAI ---- */

/* An image's type from its first bytes (base64): Ollama sends no type. */
static const char *image_type(const char *b64)
{
    return !strncmp(b64, "iVBOR", 5)    ? "image/png"
           : !strncmp(b64, "R0lGOD", 6) ? "image/gif"
           : !strncmp(b64, "UklGR", 5)  ? "image/webp"
                                        : "image/jpeg";
}

/* text and Ollama's images (base64) as OpenAI content: a string, or parts. */
static json_t *openai_content(json_t *text, json_t *images)
{
    if (!json_array_size(images))
        return json_string(json_is_string(text) ? json_string_value(text) : "");
    json_t *parts = json_array();
    if (json_string_length(text))
        json_array_append_new(parts, json_pack("{s:s, s:O}", "type", "text", "text", text));
    size_t i;
    json_t *im;
    json_array_foreach(images, i, im)
    {
        const char *b = json_string_value(im);
        if (!b)
            continue;
        size_t n = strlen(b) + 64;
        char *url = malloc(n);
        if (!url)
            continue;
        snprintf(url, n, "data:%s;base64,%s", image_type(b), b);
        json_array_append_new(
            parts, json_pack("{s:s, s:{s:s}}", "type", "image_url", "image_url", "url", url));
        free(url);
    }
    return parts;
}

/* Ollama's messages as OpenAI's: tool calls get ids, which the tool
 * answers after them name (Ollama matches them by the tool's name). */
static const char *openai_messages(json_t *in, json_t *out)
{
    json_t *ids = json_object(); /* a tool's name: its last call's id */
    char last[64] = "";
    size_t i;
    json_t *m;
    json_array_foreach(in, i, m)
    {
        if (!json_is_object(m) || !json_is_string(json_object_get(m, "role"))) {
            json_decref(ids);
            return "messages: each is an object with a role";
        }
        const char *role = json_string_value(json_object_get(m, "role"));
        json_t *o =
            json_pack("{s:s, s:o}", "role", role, "content",
                      openai_content(json_object_get(m, "content"), json_object_get(m, "images")));
        json_t *calls = json_object_get(m, "tool_calls");
        if (json_array_size(calls)) {
            json_t *a = json_array();
            size_t k;
            json_t *c;
            json_array_foreach(calls, k, c)
            {
                json_t *f = json_object_get(c, "function");
                const char *name = json_string_value(json_object_get(f, "name"));
                json_t *args = json_object_get(f, "arguments");
                char *text = args ? json_dumps(args, JSON_COMPACT | RENDER_JSON_REALS | JSON_ENCODE_ANY) : NULL;
                snprintf(last, sizeof last, "call_%zu_%zu", i, k);
                if (name)
                    json_object_set_new(ids, name, json_string(last));
                json_array_append_new(a, json_pack("{s:s, s:s, s:{s:s, s:s}}", "id", last, "type",
                                                   "function", "function", "name", name ? name : "",
                                                   "arguments", text ? text : "{}"));
                free(text);
            }
            json_object_set_new(o, "tool_calls", a);
        }
        if (!strcmp(role, "tool")) {
            const char *name = json_string_value(json_object_get(m, "tool_name"));
            const char *id = name ? json_string_value(json_object_get(ids, name)) : NULL;
            json_object_set_new(o, "tool_call_id", json_string(id ? id : last));
        }
        json_array_append_new(out, o);
    }
    json_decref(ids);
    return NULL;
}

/* Ollama's options and format as OpenAI's fields. */
static void openai_options(json_t *body, json_t *o)
{
    json_t *opt = json_object_get(body, "options");
    static const char *const same[] = {
        "temperature",      "top_p",         "top_k", "min_p",
        "typical_p",        "seed",          "stop",  "frequency_penalty",
        "presence_penalty", "repeat_penalty"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        json_t *v = json_object_get(opt, same[i]);
        if (v)
            json_object_set(o, same[i], v);
    }
    json_t *np = json_object_get(opt, "num_predict");
    if (json_is_integer(np) && json_integer_value(np) > 0)
        json_object_set(o, "max_tokens", np);
    json_t *f = json_object_get(body, "format");
    if (json_is_string(f) && !strcmp(json_string_value(f), "json"))
        json_object_set_new(o, "response_format", json_pack("{s:s}", "type", "json_object"));
    else if (json_is_object(f))
        json_object_set_new(o, "response_format",
                            json_pack("{s:s, s:{s:s, s:O}}", "type", "json_schema", "json_schema",
                                      "name", "response", "schema", f));
    json_t *tools = json_object_get(body, "tools");
    if (json_array_size(tools))
        json_object_set(o, "tools", tools);
    json_t *think = json_object_get(body, "think");
    if (json_is_boolean(think)) /* llama-server's and vLLM's way to a template's switch */
        json_object_set_new(o, "chat_template_kwargs",
                            json_pack("{s:b}", "enable_thinking", json_is_true(think)));
    else if (json_is_string(think))
        json_object_set(o, "reasoning_effort", think);
}

static const char *from_ollama(enum translate_route route, json_t *body, const char *model,
                               bool stream, char *uri, size_t urilen, json_t *o)
{
    json_object_set_new(o, "model", json_string(model));
    if (route == TRANSLATE_OLLAMA_EMBED || route == TRANSLATE_OLLAMA_EMBEDDINGS) {
        json_t *in = json_object_get(body, route == TRANSLATE_OLLAMA_EMBED ? "input" : "prompt");
        if (!json_is_string(in) && !json_is_array(in))
            return route == TRANSLATE_OLLAMA_EMBED ? "input: a string or a list of strings to embed"
                                                   : "prompt: the text to embed";
        json_object_set(o, "input", in);
        json_object_set_new(o, "encoding_format", json_string("float"));
        json_t *dim = json_object_get(body, "dimensions");
        if (json_is_integer(dim))
            json_object_set(o, "dimensions", dim);
        snprintf(uri, urilen, "/v1/embeddings");
        return NULL;
    }
    bool text = false;
    if (route == TRANSLATE_OLLAMA_CHAT) {
        json_t *msgs = json_array();
        json_object_set_new(o, "messages", msgs);
        const char *why = openai_messages(json_object_get(body, "messages"), msgs);
        if (why)
            return why;
    } else {
        json_t *prompt = json_object_get(body, "prompt");
        if (prompt && !json_is_string(prompt))
            return "prompt: a string";
        json_t *suffix = json_object_get(body, "suffix");
        text = json_is_true(json_object_get(body, "raw")) || json_string_length(suffix);
        if (text) {
            json_object_set_new(o, "prompt", prompt ? json_incref(prompt) : json_string(""));
            if (json_string_length(suffix))
                json_object_set(o, "suffix", suffix);
        } else {
            json_t *msgs = json_array();
            json_t *sys = json_object_get(body, "system");
            if (json_string_length(sys))
                json_array_append_new(msgs,
                                      json_pack("{s:s, s:O}", "role", "system", "content", sys));
            json_array_append_new(
                msgs, json_pack("{s:s, s:o}", "role", "user", "content",
                                openai_content(prompt, json_object_get(body, "images"))));
            json_object_set_new(o, "messages", msgs);
        }
    }
    openai_options(body, o);
    json_object_set_new(o, "stream", json_boolean(stream));
    if (stream)
        json_object_set_new(o, "stream_options", json_pack("{s:b}", "include_usage", 1));
    snprintf(uri, urilen, text ? "/v1/completions" : "/v1/chat/completions");
    return NULL;
}

/* ---- OpenAI to Ollama ---- */

/* OpenAI content (a string or parts) into an Ollama message's content and
 * images. */
static const char *ollama_content(json_t *content, json_t *m)
{
    if (json_is_string(content) || json_is_null(content) || !content) {
        json_object_set_new(m, "content",
                            json_string(json_is_string(content) ? json_string_value(content) : ""));
        return NULL;
    }
    if (!json_is_array(content))
        return "messages: content is a string or a list of parts";
    struct evbuffer *text = evbuffer_new();
    json_t *images = json_array();
    size_t i;
    json_t *part;
    const char *why = NULL;
    json_array_foreach(content, i, part)
    {
        const char *type = json_string_value(json_object_get(part, "type"));
        if (type && !strcmp(type, "text")) {
            const char *t = json_string_value(json_object_get(part, "text"));
            if (t) {
                if (evbuffer_get_length(text))
                    evbuffer_add(text, "\n", 1);
                evbuffer_add(text, t, strlen(t));
            }
        } else if (type && !strcmp(type, "image_url")) {
            json_t *iu = json_object_get(part, "image_url");
            const char *url = json_is_string(iu) ? json_string_value(iu)
                                                 : json_string_value(json_object_get(iu, "url"));
            const char *comma = url && !strncmp(url, "data:", 5) ? strstr(url, ";base64,") : NULL;
            if (!comma) {
                why = "image_url: only data: URLs (base64) reach a backend that speaks Ollama's "
                      "API, which takes the image itself";
                break;
            }
            json_array_append_new(images, json_string(comma + 8));
        }
    }
    size_t n = evbuffer_get_length(text);
    json_object_set_new(m, "content",
                        json_stringn(n ? (const char *)evbuffer_pullup(text, -1) : "", n));
    if (json_array_size(images))
        json_object_set(m, "images", images);
    json_decref(images);
    evbuffer_free(text);
    return why;
}

static const char *ollama_messages(json_t *in, json_t *out)
{
    json_t *names = json_object(); /* a tool call's id: the tool's name */
    size_t i;
    json_t *m;
    const char *why = NULL;
    json_array_foreach(in, i, m)
    {
        const char *role = json_string_value(json_object_get(m, "role"));
        if (!role) {
            why = "messages: each is an object with a role";
            break;
        }
        json_t *o = json_pack("{s:s}", "role", !strcmp(role, "developer") ? "system" : role);
        json_array_append_new(out, o);
        if ((why = ollama_content(json_object_get(m, "content"), o)))
            break;
        json_t *calls = json_object_get(m, "tool_calls");
        if (json_array_size(calls)) {
            json_t *a = json_array();
            json_object_set_new(o, "tool_calls", a);
            size_t k;
            json_t *c;
            json_array_foreach(calls, k, c)
            {
                json_t *f = json_object_get(c, "function");
                const char *name = json_string_value(json_object_get(f, "name"));
                const char *args = json_string_value(json_object_get(f, "arguments"));
                json_t *obj = args ? json_loads(args, JSON_DECODE_ANY, NULL) : json_object();
                if (!json_is_object(obj)) {
                    json_decref(obj);
                    why = "tool_calls: arguments must be a JSON object in a string";
                    break;
                }
                const char *id = json_string_value(json_object_get(c, "id"));
                if (id && name)
                    json_object_set_new(names, id, json_string(name));
                json_array_append_new(a, json_pack("{s:{s:s, s:o}}", "function", "name",
                                                   name ? name : "", "arguments", obj));
            }
            if (why)
                break;
        }
        const char *cid = json_string_value(json_object_get(m, "tool_call_id"));
        json_t *tn = cid ? json_object_get(names, cid) : NULL;
        if (!strcmp(role, "tool") && tn)
            json_object_set(o, "tool_name", tn);
    }
    json_decref(names);
    return why;
}

static void ollama_options(json_t *body, json_t *o)
{
    json_t *opt = json_object();
    static const char *const same[] = {
        "temperature",      "top_p",         "top_k", "min_p", "seed", "frequency_penalty",
        "presence_penalty", "repeat_penalty"};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        json_t *v = json_object_get(body, same[i]);
        if (v && !json_is_null(v))
            json_object_set(opt, same[i], v);
    }
    json_t *stop = json_object_get(body, "stop");
    if (json_is_string(stop))
        json_object_set_new(opt, "stop", json_pack("[O]", stop));
    else if (json_is_array(stop))
        json_object_set(opt, "stop", stop);
    json_t *mt = json_object_get(body, "max_completion_tokens");
    if (!json_is_integer(mt))
        mt = json_object_get(body, "max_tokens");
    if (json_is_integer(mt))
        json_object_set(opt, "num_predict", mt);
    if (json_object_size(opt))
        json_object_set(o, "options", opt);
    json_decref(opt);
    json_t *rf = json_object_get(body, "response_format");
    const char *rt = json_string_value(json_object_get(rf, "type"));
    json_t *schema = json_object_get(json_object_get(rf, "json_schema"), "schema");
    if (rt && !strcmp(rt, "json_object"))
        json_object_set_new(o, "format", json_string("json"));
    else if (rt && !strcmp(rt, "json_schema") && json_is_object(schema))
        json_object_set(o, "format", schema);
    json_t *tools = json_object_get(body, "tools");
    if (json_array_size(tools))
        json_object_set(o, "tools", tools);
    const char *effort = json_string_value(json_object_get(body, "reasoning_effort"));
    if (effort)
        json_object_set_new(o, "think",
                            !strcmp(effort, "none") ? json_false() : json_string(effort));
}

static const char *from_openai(enum translate_route route, json_t *body, const char *model,
                               bool stream, char *uri, size_t urilen, json_t *o)
{
    json_object_set_new(o, "model", json_string(model));
    if (route == TRANSLATE_OPENAI_EMBEDDINGS) {
        json_t *in = json_object_get(body, "input");
        if (!json_is_string(in) && !json_is_array(in))
            return "input: a string or a list of strings to embed";
        json_t *a = json_array_get(in, 0);
        if (a && !json_is_string(a))
            return "input: strings (token ids reach only a backend that speaks OpenAI's API)";
        json_object_set(o, "input", in);
        json_t *dim = json_object_get(body, "dimensions");
        if (json_is_integer(dim))
            json_object_set(o, "dimensions", dim);
        snprintf(uri, urilen, "/api/embed");
        return NULL;
    }
    if (route == TRANSLATE_OPENAI_CHAT) {
        json_t *msgs = json_object_get(body, "messages");
        if (!json_is_array(msgs))
            return "messages: a list of messages";
        json_t *out = json_array();
        json_object_set_new(o, "messages", out);
        const char *why = ollama_messages(msgs, out);
        if (why)
            return why;
        snprintf(uri, urilen, "/api/chat");
    } else {
        json_t *prompt = json_object_get(body, "prompt");
        if (json_is_array(prompt) && json_array_size(prompt) == 1)
            prompt = json_array_get(prompt, 0);
        if (!json_is_string(prompt))
            return "prompt: a string";
        json_object_set(o, "prompt", prompt);
        json_object_set_new(o, "raw", json_true());
        json_t *suffix = json_object_get(body, "suffix");
        if (json_is_string(suffix))
            json_object_set(o, "suffix", suffix);
        snprintf(uri, urilen, "/api/generate");
    }
    ollama_options(body, o);
    json_object_set_new(o, "stream", json_boolean(stream));
    return NULL;
}

const char *translate_request(enum translate_route route, json_t *body, const char *model,
                              uint64_t wall_ms, uint64_t id, char *uri, size_t urilen,
                              struct evbuffer *out, struct translate **t)
{
    *t = NULL;
    bool ollama = route <= TRANSLATE_OLLAMA_EMBEDDINGS;
    json_t *s = json_object_get(body, "stream");
    bool embed = route == TRANSLATE_OLLAMA_EMBED || route == TRANSLATE_OLLAMA_EMBEDDINGS ||
                 route == TRANSLATE_OPENAI_EMBEDDINGS;
    if (s && !json_is_boolean(s) && !json_is_null(s)) /* null: the API's default */
        return "stream: true or false";
    bool stream = !embed && (ollama ? !json_is_false(s) : json_is_true(s));
    json_t *o = json_object();
    const char *why = ollama ? from_ollama(route, body, model, stream, uri, urilen, o)
                             : from_openai(route, body, model, stream, uri, urilen, o);
    if (why) {
        json_decref(o);
        return why;
    }
    static const enum reply_fmt from[] = {
        [TRANSLATE_OLLAMA_CHAT] = REPLY_OPENAI_CHAT,
        [TRANSLATE_OLLAMA_GENERATE] = REPLY_OPENAI_CHAT,
        [TRANSLATE_OLLAMA_EMBED] = REPLY_OPENAI_EMBED,
        [TRANSLATE_OLLAMA_EMBEDDINGS] = REPLY_OPENAI_EMBED,
        [TRANSLATE_OPENAI_CHAT] = REPLY_OLLAMA_CHAT,
        [TRANSLATE_OPENAI_COMPLETIONS] = REPLY_OLLAMA_GENERATE,
        [TRANSLATE_OPENAI_EMBEDDINGS] = REPLY_OLLAMA_EMBED,
    };
    static const enum reply_fmt to[] = {
        [TRANSLATE_OLLAMA_CHAT] = REPLY_OLLAMA_CHAT,
        [TRANSLATE_OLLAMA_GENERATE] = REPLY_OLLAMA_GENERATE,
        [TRANSLATE_OLLAMA_EMBED] = REPLY_OLLAMA_EMBED,
        [TRANSLATE_OLLAMA_EMBEDDINGS] = REPLY_OLLAMA_EMBEDDINGS,
        [TRANSLATE_OPENAI_CHAT] = REPLY_OPENAI_CHAT,
        [TRANSLATE_OPENAI_COMPLETIONS] = REPLY_OPENAI_TEXT,
        [TRANSLATE_OPENAI_EMBEDDINGS] = REPLY_OPENAI_EMBED,
    };
    struct translate *tr = calloc(1, sizeof *tr);
    char *text = tr ? json_dumps(o, JSON_COMPACT | RENDER_JSON_REALS) : NULL;
    json_decref(o);
    if (!text) {
        free(tr);
        return "out of memory";
    }
    evbuffer_add(out, text, strlen(text));
    free(text);
    enum reply_fmt f = from[route];
    if (route == TRANSLATE_OLLAMA_GENERATE && !strcmp(uri, "/v1/completions"))
        f = REPLY_OPENAI_TEXT;
    json_t *name = json_object_get(body, "model");
    reply_init(&tr->r, f, to[route], stream, json_is_string(name) ? json_string_value(name) : model,
               wall_ms, id);
    json_t *so = json_object_get(body, "stream_options");
    tr->r.usage = json_is_true(json_object_get(so, "include_usage"));
    const char *enc = json_string_value(json_object_get(body, "encoding_format"));
    tr->r.b64 = enc && !strcmp(enc, "base64");
    *t = tr;
    return NULL;
}

const char *translate_head(struct translate *t, int status, const char *content_type)
{
    return reply_head(&t->r, status, content_type);
}

int translate_body(struct translate *t, const char *data, size_t len, uint64_t now_us,
                   struct evbuffer *out)
{
    return reply_body(&t->r, data, len, now_us, out);
}

void translate_end(struct translate *t, uint64_t t0_us, uint64_t load_us, uint64_t sent_us,
                   uint64_t now_us, struct evbuffer *out)
{
    reply_end(&t->r, t0_us, load_us, sent_us, now_us, out);
}

void translate_free(struct translate *t)
{
    if (!t)
        return;
    reply_free(&t->r);
    free(t);
}
