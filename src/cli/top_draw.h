/* top_draw: drawing the live view of `vram top`, and the state it draws,
 * which the loop (cmd_top.c) keeps up to date. */
#ifndef VRAM_CLI_TOP_DRAW_H
#define VRAM_CLI_TOP_DRAW_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/snapshot.h"

#define TOP_HISTORY 240

enum top_sort { TOP_SORT_MEMORY, TOP_SORT_PID, TOP_SORT_NAME, TOP_SORT_GPU, TOP_SORT_COUNT };

struct top_row {
    unsigned gpu;
    struct snap_proc proc;
};

struct top {
    struct snap snap;
    double interval;
    /* used memory per GPU, permille of total, oldest first in a ring */
    uint16_t *hist;
    size_t hist_n, hist_pos;
    struct top_row *rows;
    size_t nrows;
    enum top_sort sort;
    bool reverse; /* the sort the other way round */
    bool help;    /* the help screen instead of the processes, until a key */
    size_t sel, scroll;
    int confirm_sig; /* a signal waiting for y/n, or 0 */
    struct top_row confirm_row;
    char msg[200];
    bool utf8, color;
    uid_t uid;
};

void top_draw(struct top *t);

const char *top_sort_name(enum top_sort s);

#endif
