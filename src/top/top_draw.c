/* top_draw: painting the live view. A header line; each GPU's lines
 * (top_gpu.c); the process list, its columns chosen by the screen's width
 * (top_cols.c), nested in the tree; the details pane (top_detail.c); then
 * the typed filter, a message, or a line of keys. Fits 80x24 with eight
 * GPUs. */
#include <curses.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "top/top_cols.h"
#include "top/top_detail.h"
#include "top/top_draw.h"
#include "top/top_gpu.h"
#include "core/units.h"

enum { C_RESERVED = 1, C_DISPLAY, C_WORK, C_OTHER, C_UNATTR, C_HEAD, C_SEL };

static void init_colors(void)
{
    static bool done;
    if (done)
        return;
    init_pair(C_RESERVED, COLOR_BLACK, COLOR_WHITE);
    init_pair(C_DISPLAY, COLOR_BLACK, COLOR_MAGENTA);
    init_pair(C_WORK, COLOR_BLACK, COLOR_GREEN);
    init_pair(C_OTHER, COLOR_BLACK, COLOR_YELLOW);
    init_pair(C_UNATTR, COLOR_BLACK, COLOR_RED);
    init_pair(C_HEAD, COLOR_BLACK, COLOR_CYAN);
    init_pair(C_SEL, COLOR_BLACK, COLOR_CYAN);
    done = true;
}

/* The help screen, where the processes are, until a key. */
static void draw_help(const struct top *t, int y, int rows, int cols)
{
    char span[32], line[200];
    int w = top_gpu_hist_width(cols);
    units_fmt_duration(t->interval * (w ? w : 12), span, sizeof span);
    const char *text[] = {
        "keys",
        "  up/down, j/k  select a process     PgUp/PgDn  ten at a time   g/G  first/last",
        "  s or >, <     sort by the next, the previous column     S  reverse the sort",
        "  v (F5)        tree: processes under their parents, or the plain list",
        "  /             filter: user:NAME name:TEXT gpu:N role:workload model:NAME pid:N,",
        "                a word, !word to leave out; Enter applies, an empty one clears",
        "  Enter, d      details of the selected process (Esc closes them)",
        "  p, r          suspend, resume it (its model's, under vram serve)",
        "  x             stop it (asks y/n): its model is unloaded, a process gets TERM",
        "  t, K          send TERM, KILL (asks y/n; your own processes only, unless root)",
        "  + / -         refresh half as often / twice as often",
        "  ? or h        this help (any key closes it)     q  quit",
        "",
        "the bar: r driver reserved  d desktop/display  w workloads  o other",
        "         u unattributed  . free",
        NULL,
    };
    for (size_t i = 0; text[i] && y < rows - 1; i++, y++)
        mvprintw(y, 0, "%.*s", cols, text[i]);
    snprintf(line, sizeof line,
             "the history: each GPU's used memory, a column a sample (every %.1fs), the last %s;",
             t->interval, span);
    if (y < rows - 1)
        mvprintw(y++, 0, "%.*s", cols, line);
    if (y < rows - 1)
        mvprintw(y, 0, "%.*s", cols, "             a full block is the whole card");
}

static void draw_header(const struct top *t, int cols)
{
    time_t now = (time_t)(t->snap.taken_ms / 1000);
    char ts[16], head[300], cap[64], flt[160] = "";
    strftime(ts, sizeof ts, "%H:%M:%S", localtime(&now));
    if (t->filter_text[0]) {
        size_t shown = 0; /* the tree's parents on no GPU are no match */
        for (size_t i = 0; i < t->nrows; i++)
            shown += !t->rows[i].context;
        snprintf(flt, sizeof flt, "  filter '%s' %zu/%zu", t->filter_text, shown, t->total);
    }
    /* what the view is first, what the machine is after: a narrow screen
     * cuts the driver first */
    snprintf(head, sizeof head, "vram top  sort %s%s%s%s  every %.1fs  driver %s",
             top_col_key(t->sort), t->reverse ? " (reversed)" : "", t->tree ? "  tree" : "", flt,
             t->interval, t->snap.driver_version);
    /* the history's caption over its column comes first, then the clock */
    top_gpu_caption(t, cols, cap, sizeof cap);
    int w = top_gpu_hist_width(cols), room = cols - (cap[0] ? w + 1 : 0);
    attron(A_BOLD);
    mvprintw(0, 0, "%.*s", room > 0 ? room : 0, head);
    attroff(A_BOLD);
    if ((int)(strlen(head) + 2 + strlen(ts)) <= room)
        printw("  %s", ts);
    if (cap[0])
        mvprintw(0, cols - w, "%.*s", w, cap);
}

/* The branch lines before a command in the tree. */
static int branches(const struct top *t, const struct top_row *r, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (unsigned l = 1; l <= r->depth && at + 8 < len; l++) {
        bool more = r->more & (1u << (l - 1));
        const char *s = l < r->depth ? (more ? (t->utf8 ? "│ " : "| ") : "  ")
                                     : (more ? (t->utf8 ? "├─" : "|-") : (t->utf8 ? "└─" : "`-"));
        at += (size_t)snprintf(out + at, len - at, "%s", s);
    }
    return (int)r->depth * 2; /* columns, whatever the bytes */
}

static void draw_row(const struct top *t, int y, int cols, const enum top_col *c, size_t nc,
                     const struct top_row *r, bool sel)
{
    char cell[64], tree[TOP_TREE_DEPTH * 4 + 8];
    uint64_t now = t->snap.taken_ms / 1000;
    if (sel)
        attron(t->color ? COLOR_PAIR(C_SEL) : A_REVERSE);
    else if (r->context)
        attron(A_DIM);
    move(y, 0);
    int x = 0;
    for (size_t i = 0; i + 1 < nc; i++) {
        int w = top_col_width(c[i]);
        const char *v = top_col_cell(c[i], r, now, cell, sizeof cell);
        mvprintw(y, x, top_col_right(c[i]) ? "%*.*s " : "%-*.*s ", w, w, v);
        x += w + 1;
    }
    int left = cols - x, tw = 0;
    if (t->tree && left > 0) {
        tw = branches(t, r, tree, sizeof tree);
        if (tw > left)
            tw = 0; /* no room for the branches: the command alone */
        else
            mvaddstr(y, x, tree);
    }
    const char *cmd = r->proc.cmdline[0] ? r->proc.cmdline : r->proc.name;
    char tag[SNAP_NAME_MAX + 32];
    top_row_tag(r, tag, sizeof tag);
    if (left - tw > 0)
        mvprintw(y, x + tw, "%-*.*s", left - tw, left - tw, "");
    if (left - tw > 0)
        mvprintw(y, x + tw, "%.*s%.*s", left - tw, tag,
                 left - tw - (int)strlen(tag) > 0 ? left - tw - (int)strlen(tag) : 0, cmd);
    if (sel)
        attroff(t->color ? COLOR_PAIR(C_SEL) : A_REVERSE);
    else if (r->context)
        attroff(A_DIM);
}

static bool any_codec(const struct snap *s)
{
    for (size_t i = 0; i < s->ngpus; i++)
        if (s->gpus[i].have & (SNAP_HAVE_ENCODER | SNAP_HAVE_DECODER))
            return true;
    return false;
}

static void draw_list(struct top *t, int y, int rows, int cols)
{
    enum top_col c[TOP_COL_COUNT];
    size_t nc = top_cols_fit(cols, any_codec(&t->snap), c);
    if (t->color)
        attron(COLOR_PAIR(C_HEAD));
    mvprintw(y, 0, "%-*s", cols, "");
    int x = 0;
    for (size_t i = 0; i < nc; i++) {
        int w = i + 1 < nc ? top_col_width(c[i]) : cols - x;
        if (w <= 0)
            break;
        if (c[i] == t->sort)
            attron(A_UNDERLINE | A_BOLD);
        mvprintw(y, x, top_col_right(c[i]) ? "%*.*s" : "%-*.*s", w, w, top_col_name(c[i]));
        if (c[i] == t->sort)
            attroff(A_UNDERLINE | A_BOLD);
        x += w + 1;
    }
    if (t->color)
        attroff(COLOR_PAIR(C_HEAD));
    y++;
    int room = rows - 1 - y;
    if (room < 0)
        room = 0;
    int pane = top_detail_lines(t, room);
    room -= pane;
    if (t->sel < t->scroll)
        t->scroll = t->sel;
    if (room && t->sel >= t->scroll + (size_t)room)
        t->scroll = t->sel - (size_t)room + 1;
    if (t->scroll + (size_t)room > t->nrows) /* a shorter list: show its end */
        t->scroll = t->nrows > (size_t)room ? t->nrows - (size_t)room : 0;
    for (int i = 0; i < room && t->scroll + (size_t)i < t->nrows; i++)
        draw_row(t, y + i, cols, c, nc, &t->rows[t->scroll + (size_t)i],
                 t->scroll + (size_t)i == t->sel);
    if (!t->nrows && room > 0)
        mvprintw(y, 0, "%.*s", cols,
                 t->total ? "no process matches the filter (/ then Enter: every process)"
                          : "no process uses a GPU");
    top_detail_draw(t, y + room, pane, cols);
}

static void draw_footer(const struct top *t, int rows, int cols)
{
    if (t->typing) { /* the line typed, and why it was refused if it was */
        const char *why = !strncmp(t->msg, "filter: ", 8) ? t->msg + 8 : t->msg;
        mvprintw(rows - 1, 0, "filter: %.*s", cols > 9 ? cols - 9 : 0, t->typed);
        if (getcurx(stdscr) < cols)
            addch('_');
        int x = getcurx(stdscr) + 3;
        if (why[0] && x < cols)
            mvprintw(rows - 1, x, "%.*s", cols - x, why);
    } else if (t->msg[0]) {
        mvprintw(rows - 1, 0, "%.*s", cols, t->msg);
    } else {
        mvprintw(rows - 1, 0, "%.*s", cols,
                 "q quit  s/S sort  v tree  / filter  Enter details  p/r suspend/resume  x stop  "
                 "t/K signal  ? help");
    }
}

void top_draw(struct top *t)
{
    int rows, cols;
    getmaxyx(stdscr, rows, cols);
    erase();
    if (t->color)
        init_colors();
    draw_header(t, cols);
    size_t ng = t->snap.ngpus;
    int lines = top_gpu_lines(rows, cols, ng);
    int y = 1;
    for (size_t i = 0; i < ng && y < rows - 3; i++) {
        top_gpu_draw(t, y, cols, &t->snap.gpus[i], lines);
        y += lines;
    }
    if (ng == 0)
        mvprintw(y++, 0, "no NVIDIA GPU found");
    if (t->help) {
        draw_help(t, y, rows, cols);
        mvprintw(rows - 1, 0, "%.*s", cols, "any key: back to the processes");
    } else {
        draw_list(t, y, rows, cols);
        draw_footer(t, rows, cols);
    }
    refresh();
}
