/* sse: a backend's streamed answer cut into its events, whatever the
 * reads split: server-sent events (data: lines up to a blank line, the
 * OpenAI stream) or newline-delimited JSON (a line each, Ollama's). */
#ifndef VRAM_DAEMON_SSE_H
#define VRAM_DAEMON_SSE_H

#include <stdbool.h>
#include <stddef.h>

/* The longest event kept: a longer one is an error, not a memory sink. */
#define SSE_MAX_EVENT (16u << 20)

struct sse {
    bool ndjson;     /* a line is an event; else server-sent events */
    char *line;      /* the line being read, and for SSE the data so far */
    size_t len, cap; /* of line */
    size_t data;     /* SSE: bytes of line that are the event's data lines */
    bool data_seen;  /* SSE: the event has a data line (it may be empty) */
    bool skip_lf;    /* a CR ended the last line: an LF right after it is its own */
    bool overflow;
};

void sse_init(struct sse *s, bool ndjson);
void sse_free(struct sse *s);

/* Feeds len bytes; event() is called with each whole event's data (NUL-
 * terminated, its length apart) as it completes. -1 once an event is over
 * SSE_MAX_EVENT (nothing more is called), else 0. */
int sse_feed(struct sse *s, const char *data, size_t len,
             void (*event)(void *arg, const char *data, size_t len), void *arg);

/* The stream ended: what is left (an NDJSON line without its newline, an
 * event without its blank line) is handed over too. */
void sse_end(struct sse *s, void (*event)(void *arg, const char *data, size_t len), void *arg);

#endif
