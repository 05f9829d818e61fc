/* top_draw: painting the live view. One line per GPU (bar and history),
 * a second with the breakdown in figures when the screen has room, then the
 * process list, then a line of keys or the last message. Fits 80x24 with
 * eight GPUs. */
#include <curses.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/acct.h"
#include "core/role.h"
#include "core/units.h"
#include "cli/top_draw.h"
#include "app/render_text.h"

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

/* The bar: each part gets cells in proportion, at least one when non-zero. */
static void draw_bar(const struct top *t, int y, int x, int width, const struct acct *a)
{
    const struct {
        uint64_t v;
        char ch;
        int color;
    } parts[] = {
        {a->reserved, 'r', C_RESERVED},   {a->display, 'd', C_DISPLAY},
        {a->workloads, 'w', C_WORK},      {a->other, 'o', C_OTHER},
        {a->unattributed, 'u', C_UNATTR},
    };
    mvaddch(y, x, '[');
    int pos = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0] && a->total; i++) {
        int cells = (int)((unsigned __int128)parts[i].v * (unsigned)width / a->total);
        if (parts[i].v && cells == 0)
            cells = 1;
        if (pos + cells > width)
            cells = width - pos;
        if (t->color)
            attron(COLOR_PAIR(parts[i].color));
        for (int k = 0; k < cells; k++)
            mvaddch(y, x + 1 + pos + k, (chtype)parts[i].ch);
        if (t->color)
            attroff(COLOR_PAIR(parts[i].color));
        pos += cells;
    }
    for (; pos < width; pos++)
        mvaddch(y, x + 1 + pos, '.');
    mvaddch(y, x + 1 + width, ']');
}

static void draw_history(const struct top *t, int y, int x, int width, size_t gpu)
{
    static const char *const blocks[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    static const char ascii[] = " .:-=+*#%@";
    if (!t->hist || gpu >= t->hist_n || width <= 0)
        return;
    const uint16_t *h = t->hist + gpu * TOP_HISTORY;
    for (int i = 0; i < width && i < TOP_HISTORY; i++) {
        size_t idx = (t->hist_pos + TOP_HISTORY - (size_t)width + (size_t)i) % TOP_HISTORY;
        unsigned v = h[idx];
        if (t->utf8)
            mvaddstr(y, x + i, blocks[v * 8 / 1000]);
        else
            mvaddch(y, x + i, (chtype)ascii[v * 9 / 1000]);
    }
}

/* The history's width beside the bar: wider on a wide screen, none where
 * the bar would be too short. */
static int history_width(int cols)
{
    int hist_w = cols >= 100 ? 30 : 12;
    return cols - 36 - 2 - hist_w - 1 < 10 ? 0 : hist_w;
}

/* Above the history column, what it shows: the time its columns span (one
 * sample each) and its scale (a full block is the whole card); "" when
 * there is no history. */
static void history_caption(const struct top *t, int cols, char *cap, size_t len)
{
    int w = history_width(cols);
    char span[32];
    cap[0] = '\0';
    if (!w)
        return;
    units_fmt_duration(t->interval * w, span, sizeof span);
    snprintf(cap, len, w >= 30 ? "used memory, last %s, 0-100%%" : "%s, 0-100%%", span);
}

/* The help screen, where the processes are, until a key. */
static void draw_help(const struct top *t, int y, int rows, int cols)
{
    char span[32], line[200];
    units_fmt_duration(t->interval * (history_width(cols) ? history_width(cols) : 12), span,
                       sizeof span);
    const char *text[] = {
        "keys",
        "  up/down, j/k  select a process         PgUp/PgDn  ten at a time",
        "  s             sort: memory, pid, name, gpu      S  reverse the sort",
        "  t, K          send TERM, KILL to the selected process (asks y/n;",
        "                your own processes only, unless root)",
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

static void draw_gpu(const struct top *t, int y, int cols, const struct snap_gpu *g, bool two)
{
    struct acct a;
    acct_gpu(g, &a);
    char name[20], used[16], total[16];
    /* "NVIDIA GeForce RTX 5070 Ti" -> "RTX 5070 Ti": the vendor is a given */
    const char *n = g->name;
    if (!strncmp(n, "NVIDIA ", 7))
        n += 7;
    if (!strncmp(n, "GeForce ", 8))
        n += 8;
    snprintf(name, sizeof name, "%-14.14s", n);
    snprintf(used, sizeof used, "%.1f", (double)acct_used(&a) / UNITS_GiB);
    snprintf(total, sizeof total, "%.1f", (double)a.total / UNITS_GiB);
    mvprintw(y, 0, "%-2u %s %6s/%-6s GiB", g->index, name, used, total);
    int x = 36, hist_w = history_width(cols);
    int bar_w = hist_w ? cols - x - 2 - hist_w - 1 : cols - x - 2;
    if (bar_w > 0)
        draw_bar(t, y, x, bar_w, &a);
    if (hist_w)
        draw_history(t, y, cols - hist_w, hist_w, g->index);
    if (!two)
        return;
    char b[6][16];
    mvprintw(y + 1, 3, "reserved %s  display %s  work %s  other %s  unattributed %s GiB",
             units_fmt_gib(a.reserved, b[0], 16), units_fmt_gib(a.display, b[1], 16),
             units_fmt_gib(a.workloads, b[2], 16), units_fmt_gib(a.other, b[3], 16),
             units_fmt_gib(a.unattributed, b[4], 16));
    char extra[64] = "";
    int len = 0;
    if (g->have & SNAP_HAVE_POWER)
        len += snprintf(extra + len, sizeof extra - (size_t)len, " %uW", g->power_mw / 1000);
    if (g->have & SNAP_HAVE_TEMP)
        len += snprintf(extra + len, sizeof extra - (size_t)len, " %uC", g->temp_c);
    if (g->have & SNAP_HAVE_UTIL)
        snprintf(extra + len, sizeof extra - (size_t)len, " %u%%", g->util_gpu);
    int at = getcurx(stdscr);
    if (cols > at + (int)strlen(extra))
        mvprintw(y + 1, at, "%s", extra);
}

void top_draw(struct top *t)
{
    int rows, cols;
    getmaxyx(stdscr, rows, cols);
    erase();
    if (t->color)
        init_colors();
    time_t now = (time_t)(t->snap.taken_ms / 1000);
    char ts[16];
    strftime(ts, sizeof ts, "%H:%M:%S", localtime(&now));
    /* the history's caption over its column comes first, then the clock */
    char head[160], cap[64];
    snprintf(head, sizeof head, "vram top  driver %s  every %.1fs  sort %s%s",
             t->snap.driver_version, t->interval, top_sort_name(t->sort),
             t->reverse ? " (reversed)" : "");
    history_caption(t, cols, cap, sizeof cap);
    int w = history_width(cols), head_room = cols - (cap[0] ? w + 1 : 0);
    attron(A_BOLD);
    mvprintw(0, 0, "%.*s", head_room > 0 ? head_room : 0, head);
    attroff(A_BOLD);
    if ((int)(strlen(head) + 2 + strlen(ts)) <= head_room)
        printw("  %s", ts);
    if (cap[0])
        mvprintw(0, cols - w, "%.*s", w, cap);

    size_t ng = t->snap.ngpus;
    /* a second line per GPU only while at least 6 process rows remain */
    bool two = rows - 3 - 2 * (int)ng >= 6;
    int y = 1;
    for (size_t i = 0; i < ng && y < rows - 3; i++) {
        draw_gpu(t, y, cols, &t->snap.gpus[i], two);
        y += two ? 2 : 1;
    }
    if (ng == 0)
        mvprintw(y++, 0, "no NVIDIA GPU found");

    if (t->help) {
        draw_help(t, y, rows, cols);
        mvprintw(rows - 1, 0, "%.*s", cols, "any key: back to the processes");
        refresh();
        return;
    }
    if (t->color)
        attron(COLOR_PAIR(C_HEAD));
    mvprintw(y, 0, "%7s %-9s %3s %-8s %-8s %9s %-8s %-*s", "PID", "USER", "GPU", "ROLE", "TYPE",
             "VRAM", "STATE", cols > 60 ? cols - 60 : 0, "COMMAND");
    if (t->color)
        attroff(COLOR_PAIR(C_HEAD));
    y++;
    int room = rows - 1 - y;
    if (room < 0)
        room = 0;
    if (t->sel < t->scroll)
        t->scroll = t->sel;
    if (room && t->sel >= t->scroll + (size_t)room)
        t->scroll = t->sel - (size_t)room + 1;
    for (int i = 0; i < room && t->scroll + (size_t)i < t->nrows; i++) {
        const struct top_row *r = &t->rows[t->scroll + (size_t)i];
        const struct snap_proc *p = &r->proc;
        char tb[24], mem[16];
        bool sel = t->scroll + (size_t)i == t->sel;
        if (sel)
            attron(t->color ? COLOR_PAIR(C_SEL) : A_REVERSE);
        render_ptype(p->types, tb, sizeof tb);
        if (!strcmp(tb, "compute+graphics"))
            snprintf(tb, sizeof tb, "C+G");
        else if (!strcmp(tb, "device-file"))
            snprintf(tb, sizeof tb, "fd");
        mvprintw(y + i, 0, "%7u %-9.9s %3u %-8s %-8s %9s %-8s %-*.*s", p->pid,
                 p->host_known ? p->user : "?", r->gpu, role_name(p->role), tb,
                 p->used_known ? units_fmt_size(p->used, mem, sizeof mem) : "n/a",
                 render_pstate(p->state), cols > 60 ? cols - 60 : 0, cols > 60 ? cols - 60 : 0,
                 p->cmdline[0] ? p->cmdline : p->name);
        if (sel)
            attroff(t->color ? COLOR_PAIR(C_SEL) : A_REVERSE);
    }
    if (t->msg[0])
        mvprintw(rows - 1, 0, "%.*s", cols, t->msg);
    else
        mvprintw(rows - 1, 0, "%.*s", cols,
                 "q quit  j/k select  s/S sort  t TERM  K KILL  +/- interval  ? help   "
                 "r reserved d display w work o other u unattr");
    refresh();
}
