/* top_draw: drawing the live view of `vram top`, and the state it draws,
 * which the loop (cmd_top.c, on Linux and Windows) keeps up to date through
 * top_rows.h and top_keys.h. */
#ifndef VRAM_TOP_TOP_DRAW_H
#define VRAM_TOP_TOP_DRAW_H

#include <stdbool.h>
#include <stdint.h>

#include "top/top_cols.h"
#include "top/top_filter.h"
#include "top/top_hist.h"
#include "top/top_tree.h"
#include "core/snapshot.h"

/* What top can do to the selected process, as the keys name it. */
enum top_verb { TOP_TERM, TOP_KILL, TOP_SUSPEND, TOP_RESUME, TOP_STOP };

/* The details pane's figures beyond the row's: filled by ops.detail. */
struct top_info {
    uint32_t pid;
    bool have;
    char cmdline[4096];
    char cgroup[512];
    char model_state[160]; /* what vram serve says of its model, "" until it answers */
};

struct top;

/* What the OS lets top do; a NULL member: not here (the keys say so). */
struct top_ops {
    /* carries out verb on r (TERM, KILL and STOP after a y), saying the
     * outcome, or that it started, in t->msg */
    void (*act)(struct top *t, enum top_verb v, const struct top_row *r);
    /* fills t->info for r, for the details pane */
    void (*detail)(struct top *t, const struct top_row *r);
    /* a process's host fields, for the tree's parents on no GPU */
    top_host_fn host;
    void *host_ctx;
    /* where act is NULL: what to use instead ("taskkill /PID N") */
    const char *instead;
};

struct top {
    struct snap snap;
    double interval;
    struct top_hist hist;
    /* rows of processes away from their GPU (top_row.away), the OS's to
     * find (top_actions.c), listed with the snapshot's */
    struct top_row *away;
    size_t naway;
    /* the list as shown: filtered, sorted, in tree order when tree */
    struct top_row *rows;
    size_t nrows, total; /* total: the processes before the filter */
    enum top_col sort;
    bool reverse; /* the sort the other way round */
    bool tree;
    struct top_filter filter;
    char filter_text[128];
    /* a line being typed at the bottom (after /), until Enter or Esc */
    bool typing;
    char typed[128];
    bool help;   /* the help screen instead of the processes, until a key */
    bool detail; /* the details pane under the processes */
    struct top_info info;
    size_t sel, scroll;
    /* a y/n question about the selected row: what y does, or asking false */
    bool asking;
    enum top_verb ask_verb;
    struct top_row ask_row;
    char msg[300];
    bool utf8, color;
    uint32_t uid; /* who runs top: only root signals others' processes */
    const struct top_ops *ops;
};

/* Draws the whole screen (curses' stdscr) and refreshes it. */
void top_draw(struct top *t);

#endif
