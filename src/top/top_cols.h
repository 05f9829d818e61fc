/* top_cols: the columns of top's process list: their headers and widths,
 * which of them a screen's width has room for, each cell's text, and the
 * order each sorts by. */
#ifndef VRAM_TOP_TOP_COLS_H
#define VRAM_TOP_TOP_COLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"

/* In the order they are drawn; COMMAND last, taking what is left. */
enum top_col {
    TOP_COL_PID,
    TOP_COL_USER,
    TOP_COL_GPU,
    TOP_COL_ROLE,
    TOP_COL_TYPE,
    TOP_COL_VRAM,
    TOP_COL_SM,    /* its share of the SMs */
    TOP_COL_MBW,   /* of the memory controller: memory bandwidth */
    TOP_COL_ENC,   /* of the video encoder */
    TOP_COL_DEC,   /* of the video decoder */
    TOP_COL_CPU,   /* CPU %, 100 a core */
    TOP_COL_RSS,   /* host memory */
    TOP_COL_TIME,  /* running time */
    TOP_COL_STATE,
    TOP_COL_COMMAND,
    TOP_COL_COUNT
};

/* A row for a process that holds no GPU now but is top's to bring back
 * (r resumes it): suspended by vram suspend, or a model of vram serve. */
enum top_away { TOP_HERE, TOP_SUSPENDED, TOP_MODEL_AWAY };

#define TOP_NO_GPU 0xffffffffu /* a row of no GPU's: "-" */

/* One line of the list: a process on one GPU (a process on two GPUs has
 * two), in the tree a parent on no GPU that two of them share, or a
 * process away from its GPU. */
struct top_row {
    unsigned gpu; /* the GPU it left, for TOP_SUSPENDED; TOP_NO_GPU: none known */
    struct snap_proc proc;
    enum top_away away;
    uint64_t away_bytes; /* TOP_SUSPENDED: what it held when it was suspended */
    bool context;  /* tree: on no GPU; its GPU fields are empty */
    unsigned depth; /* tree: 0 for a root */
    /* tree: bit k set when the ancestor at depth k+1 (or this row, for
     * k = depth - 1) has a later sibling: where the branch lines go on */
    uint32_t more;
};

/* The columns to draw on a screen cols wide, in drawing order, COMMAND
 * last: by priority, as many as leave COMMAND 16 columns; ENC and DEC only
 * with codecs (some GPU reports its encoder or decoder). Returns the count
 * written to out (TOP_COL_COUNT at most). */
size_t top_cols_fit(int cols, bool codecs, enum top_col *out);

/* The header of a column ("PID", "SM%") and its width (COMMAND's: 0). */
const char *top_col_name(enum top_col c);
int top_col_width(enum top_col c);
bool top_col_right(enum top_col c); /* numbers align right */

/* A name as typed after s or in --sort: "pid", "sm", "cpu", ... -1 when
 * no column is called so. */
int top_col_parse(const char *name);
const char *top_col_key(enum top_col c);

/* The text of one cell (not COMMAND's) into buf; now_s: the wall clock,
 * for the running time. "-" where the figure is unknown. */
const char *top_col_cell(enum top_col c, const struct top_row *r, uint64_t now_s, char *buf,
                         size_t len);

/* How a and b compare by column c: the larger figure first for sizes and
 * shares, the alphabet for names; then by pid. */
int top_col_cmp(enum top_col c, const struct top_row *a, const struct top_row *b);

/* What a row's COMMAND starts with: "[suspended] ", "[model m, on no GPU] ". */
const char *top_row_tag(const struct top_row *r, char *buf, size_t len);

/* "1:02:03", "12:34", "3d04h": a running time in 8 columns at most. */
const char *top_fmt_elapsed(uint64_t seconds, char *buf, size_t len);

#endif
