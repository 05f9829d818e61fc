/* jscan: JSON read as a stream of tokens from a bounded reader, in constant
 * memory: a 100 MiB safetensors header or a hostile config.json costs its
 * reading time, never a tree of its size. */
#ifndef VRAM_MODEL_JSCAN_H
#define VRAM_MODEL_JSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/reader.h"

#define JSCAN_DEPTH 64 /* deeper nesting is refused */
#define JSCAN_STR 512  /* strings and keys are kept up to this, cut beyond */

enum jscan_tok {
    JSCAN_ERR = -1, /* what is wrong in err, with line and column */
    JSCAN_EOF,      /* the document is complete and nothing but spaces follow */
    JSCAN_OBJ,
    JSCAN_OBJ_END,
    JSCAN_ARR,
    JSCAN_ARR_END,
    JSCAN_KEY, /* a member's name, in str */
    JSCAN_STRING,
    JSCAN_NUM,
    JSCAN_TRUE,
    JSCAN_FALSE,
    JSCAN_NULL,
};

struct jscan {
    struct reader *r;
    unsigned depth;
    char in[JSCAN_DEPTH]; /* '{' or '[' per open level */
    int state;            /* what may come next */
    uint64_t start;       /* where the document began in the reader */
    unsigned line, col;   /* of an error, counted when it happens */
    char str[JSCAN_STR]; /* the last string or key, NUL-terminated */
    size_t len;          /* its length, cut or not */
    bool cut;            /* longer than str holds */
    int64_t num;         /* the last number, when whole */
    bool whole;          /* it has no fraction or exponent and fits 64 bits */
    char err[160];
};

/* Reads from r's current position to its end: the document must fill it
 * (trailing spaces aside). */
void jscan_init(struct jscan *j, struct reader *r);
enum jscan_tok jscan_next(struct jscan *j);

/* Skips the value that comes next (a scalar, or an object or array whole).
 * JSCAN_ERR or the token skipped's kind. What an object or array holds is
 * skipped by its brackets and strings, not checked. */
enum jscan_tok jscan_skip(struct jscan *j);

/* t was just read: when it opened an object or an array, reads to its end.
 * JSCAN_ERR, or t. */
enum jscan_tok jscan_finish(struct jscan *j, enum jscan_tok t);

/* The last key or string is exactly s (not cut). */
bool jscan_is(const struct jscan *j, const char *s);

#endif
