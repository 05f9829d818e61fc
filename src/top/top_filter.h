/* top_filter: which processes top lists: what the user typed after / (or
 * gave with --filter), parsed once, matched against each row. */
#ifndef VRAM_TOP_TOP_FILTER_H
#define VRAM_TOP_TOP_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "top/top_cols.h"

#define TOP_FILTER_TERMS 8

enum top_fkey { TOP_F_TEXT, TOP_F_USER, TOP_F_NAME, TOP_F_GPU, TOP_F_ROLE, TOP_F_MODEL, TOP_F_PID };

struct top_filter {
    struct top_fterm {
        enum top_fkey key;
        bool neg; /* "!user:root": every process but root's */
        unsigned num;
        char val[64];
    } t[TOP_FILTER_TERMS];
    size_t n;
};

/* Words separated by spaces: "user:NAME", "name:TEXT" (in the name or the
 * command line), "gpu:N", "role:display|workload|other", "model:NAME",
 * "pid:N", or a bare word found in the name, command line or user; "!"
 * before one keeps the processes it does not match. Terms of one key
 * match any of them (gpu:0 gpu:1), of different keys all. Empty text:
 * every process. 0, or -1 with err saying what is wrong and what to type. */
int top_filter_parse(const char *text, struct top_filter *f, char *err, size_t errlen);

bool top_filter_match(const struct top_filter *f, const struct top_row *r);

#endif
