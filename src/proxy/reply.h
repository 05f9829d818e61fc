/* reply: the answer side of translate.h: a backend's answer, streamed or
 * whole, in its API's format, turned into the client's, event by event.
 * Both sides meet in one form: text, thinking and tool calls as they come,
 * then a finish reason and token counts. */
#ifndef VRAM_PROXY_REPLY_H
#define VRAM_PROXY_REPLY_H

#include <event2/buffer.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/modelname.h"
#include "http/sse.h"

/* What a backend answers with, and what the client wants. */
enum reply_fmt {
    REPLY_OPENAI_CHAT, /* chat.completion(.chunk) */
    REPLY_OPENAI_TEXT, /* text_completion */
    REPLY_OPENAI_EMBED,
    REPLY_OLLAMA_CHAT,
    REPLY_OLLAMA_GENERATE,
    REPLY_OLLAMA_EMBED,
    REPLY_OLLAMA_EMBEDDINGS, /* the old one: {"embedding": [...]} */
};

#define REPLY_MAX_CALLS 64

struct reply {
    enum reply_fmt from, to;
    bool stream;      /* the client asked for a stream */
    bool usage;       /* an OpenAI client asked for a last chunk with the usage */
    bool b64;         /* an OpenAI client asked for embeddings in base64 */
    char model[MODELNAME_MAX]; /* as the client named it */
    char id[48];      /* an OpenAI answer's id */
    uint64_t wall_ms; /* when the request came: OpenAI's created, Ollama's created_at */
    int status;
    bool whole;    /* the backend's answer is read whole, then translated */
    bool failed;   /* an error (status >= 400): its text goes in the client's format */
    bool began;    /* the client has had a chunk (OpenAI's first carries the role) */
    bool finished; /* the backend said it is done */
    bool errored;  /* the client had an error in the stream: no more */
    bool broken;   /* the answer could not be read: cut */
    struct sse sse;
    struct evbuffer *acc;          /* whole: the backend's body so far */
    struct evbuffer *text, *think; /* a whole answer to the client, so far */
    json_t *calls;                 /* tool calls, OpenAI's form, complete */
    /* an OpenAI stream's tool calls, in pieces: by index */
    struct {
        char id[64];
        char name[128];
        struct evbuffer *args;
    } part[REPLY_MAX_CALLS];
    unsigned nparts;
    unsigned sent_calls;                        /* tool calls the OpenAI client has had */
    char finish[24];                            /* the backend's word, "" until it says */
    long long prompt_tokens, completion_tokens; /* -1: not said */
    double prompt_ms, predicted_ms;             /* llama-server's timings; < 0: not said */
    uint64_t prompt_ns, eval_ns;                /* Ollama's durations; 0: not said */
    uint64_t first_us;                          /* when the first text came */
};

void reply_init(struct reply *r, enum reply_fmt from, enum reply_fmt to, bool stream,
                const char *model, uint64_t wall_ms, uint64_t id);
const char *reply_head(struct reply *r, int status, const char *content_type);
int reply_body(struct reply *r, const char *data, size_t len, uint64_t now_us,
               struct evbuffer *out);
void reply_end(struct reply *r, uint64_t t0_us, uint64_t load_us, uint64_t sent_us, uint64_t now_us,
               struct evbuffer *out);
void reply_free(struct reply *r);

/* An RFC 3339 time in UTC, with milliseconds, as Ollama's created_at. */
void reply_time(uint64_t wall_ms, char *out, size_t len);

#endif
