/* translate: a request on one API answered by a backend that speaks the
 * other: Ollama's /api/chat, /api/generate, /api/embed and /api/embeddings
 * toward an OpenAI-only backend (api = openai), OpenAI's
 * /v1/chat/completions, /v1/completions and /v1/embeddings toward an
 * Ollama-only one (api = ollama). The request's JSON is rewritten whole;
 * the answer is rewritten as it streams (SSE to NDJSON and back, split
 * across reads anyhow), or whole when it is not streamed. Pure: bytes and
 * times in, bytes out (the mapping, field by field: docs/proxy.md). */
#ifndef VRAM_PROXY_TRANSLATE_H
#define VRAM_PROXY_TRANSLATE_H

#include <event2/buffer.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/config.h"

enum translate_route {
    TRANSLATE_NONE, /* passes through as it is */
    TRANSLATE_OLLAMA_CHAT,
    TRANSLATE_OLLAMA_GENERATE,
    TRANSLATE_OLLAMA_EMBED,
    TRANSLATE_OLLAMA_EMBEDDINGS, /* the old /api/embeddings: one prompt, one vector */
    TRANSLATE_OPENAI_CHAT,
    TRANSLATE_OPENAI_COMPLETIONS,
    TRANSLATE_OPENAI_EMBEDDINGS,
};

/* The way a client's path takes to a backend that speaks api. */
enum translate_route translate_route(const char *path, enum config_api api);

/* An Ollama request that asks only to load or unload its model (no prompt,
 * no messages): answered by the proxy once the model is ready, with
 * done_reason "load" or "unload" (keep_alive 0). */
bool translate_load_only(enum translate_route route, json_t *body);

/* That answer: one JSON object, into out. */
void translate_load_reply(enum translate_route route, const char *model, bool unload,
                          uint64_t wall_ms, struct evbuffer *out);

struct translate;

/* The request: body (the client's JSON) for the backend, whose model is
 * model; the backend's path into uri, its body into out. NULL and *t set,
 * or what is wrong with the request (a 400). wall_ms: the wall clock, for
 * the answer's timestamps; id: a number for the answer's id. */
const char *translate_request(enum translate_route route, json_t *body, const char *model,
                              uint64_t wall_ms, uint64_t id, char *uri, size_t urilen,
                              struct evbuffer *out, struct translate **t);

/* The backend's status and Content-Type (NULL: none) arrived: the client's
 * Content-Type (its status is the same). */
const char *translate_head(struct translate *t, int status, const char *content_type);

/* Bytes of the backend's answer; now_us a monotonic clock. What the client
 * gets goes to out. -1: the answer cannot be translated (too long a line,
 * or a whole answer over TRANSLATE_MAX_WHOLE): the client's stream is cut. */
#define TRANSLATE_MAX_WHOLE (256u << 20)
int translate_body(struct translate *t, const char *data, size_t len, uint64_t now_us,
                   struct evbuffer *out);

/* The answer is whole. sent_us: when the request left for the backend;
 * load_us: how long it waited for its model; t0_us: when it arrived (all
 * on now_us's clock). What is left for the client goes to out. */
void translate_end(struct translate *t, uint64_t t0_us, uint64_t load_us, uint64_t sent_us,
                   uint64_t now_us, struct evbuffer *out);

void translate_free(struct translate *t);

#endif
