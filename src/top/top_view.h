/* top_view: the view of `vram top` (cmd_top.c, on Linux and Windows): its
 * options (--once, --json, --sort, --reverse, --tree, --filter,
 * --interval), the state they start, what each refresh samples, and what
 * follows a sample. */
#ifndef VRAM_TOP_TOP_VIEW_H
#define VRAM_TOP_TOP_VIEW_H

#include <stdint.h>

#include "cli/cmd.h"
#include "top/top_draw.h"

struct top_view {
    double interval;
    bool once, json, tree, reverse;
    int sort; /* enum top_col */
    const char *filter;
};

extern const struct cmd_word top_view_sorts[];

/* The options' entries for a command whose options struct T holds a
 * struct top_view named f. */
#define TOP_VIEW_OPTS(T, f)                                                                        \
    {"interval", 'd', CMD_SECONDS(T, f.interval, 0.1, 3600), .arg = "SECONDS",                     \
     .fix = "give seconds from 0.1 to 3600",                                                       \
     .help = "refresh every SECONDS (0.1 to 3600; default 1)"},                                    \
        {"once", '1', CMD_FLAG(T, f.once),                                                         \
         .help = "print one frame and exit, after one interval (CPU % needs two readings): "      \
                 "$COLUMNS x $LINES, else the terminal's size, else 80x24"},                       \
        {"json", 'j', CMD_FLAG(T, f.json),                                                         \
         .help = "with --once: the frame as JSON (docs/status-json.md)"},                          \
        {"sort", 's', CMD_CHOICE(T, f.sort, top_view_sorts), .arg = "COLUMN",                      \
         .help = "sort by COLUMN: pid, user, gpu, role, type, vram, sm, mbw, enc, dec, cpu, "      \
                 "rss, time, state, command (default vram)"},                                      \
        {"reverse", 'r', CMD_FLAG(T, f.reverse), .help = "the sort the other way round"},          \
        {"tree", 't', CMD_FLAG(T, f.tree), .help = "processes under their parents"},               \
        {"filter", 'f', CMD_STRING(T, f.filter), .arg = "TEXT",                                    \
         .help = "only the processes TEXT matches: user:NAME, name:TEXT, gpu:N, role:ROLE, "       \
                 "model:NAME, pid:N, a word; ! before one to leave its matches out"}

#define TOP_VIEW_DEFAULTS {.interval = 1.0, .sort = TOP_COL_VRAM}

/* t from the options: 0, or the exit code 2 with the message printed
 * (a filter that does not parse). */
int top_view_start(struct top *t, const struct top_view *v, const char *cmd);

/* When each part was last read, for top_view_what. */
struct top_cadence {
    uint64_t procs, holders, slow, pcie;
};

/* What a refresh at now_ms samples (PROBE_*), every step_ms: memory,
 * utilization, clocks and shares every refresh; PCIe throughput once a
 * second at most (the driver counts 40 ms a GPU for it); process lists
 * every 3 refreshes (5 s at most); modes and links every 10 s; the
 * holders' scan every 10 s on the probe's thread. */
unsigned top_view_what(struct top_cadence *c, uint64_t now_ms, uint64_t step_ms);

/* After a sample of what: the histories, and the list when the processes
 * were read. */
void top_view_took(struct top *t, unsigned what);

#endif
