/* top_gpu: a GPU's lines. The first always: name, used/total, the bar,
 * the history. The second and third when the screen has room for them
 * and six processes: the bar in figures, then the meters, each dropped
 * from the right when the line is full. Fits 80x24 with eight GPUs (one
 * line each). */
#include "top/top_gpu.h"

#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/acct.h"
#include "core/units.h"

enum { C_RESERVED = 1, C_DISPLAY, C_WORK, C_OTHER, C_UNATTR };

int top_gpu_lines(int rows, int cols, size_t ngpus)
{
    /* the meters take one line on a wide screen, two on a narrow one */
    int most = cols >= 150 ? 3 : 4;
    /* header, column titles, a line of keys, and six processes */
    for (int lines = most; lines > 1; lines--)
        if (rows - 3 - lines * (int)ngpus >= 6)
            return lines;
    return 1;
}

int top_gpu_hist_width(int cols)
{
    int w = cols >= 100 ? 30 : 12;
    return cols - 36 - 2 - w - 1 < 10 ? 0 : w;
}

void top_gpu_caption(const struct top *t, int cols, char *cap, size_t len)
{
    int w = top_gpu_hist_width(cols);
    char span[32];
    cap[0] = '\0';
    if (!w)
        return;
    units_fmt_duration(t->interval * w, span, sizeof span);
    snprintf(cap, len, w >= 30 ? "used memory, last %s, 0-100%%" : "%s, 0-100%%", span);
}

void top_gpu_graph(const struct top *t, int y, int x, int w, size_t gpu, enum top_series s)
{
    static const char *const blocks[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    static const char ascii[] = " .:-=+*#%@";
    uint16_t v[TOP_HISTORY];
    if (w <= 0)
        return;
    top_hist_last(&t->hist, gpu, s, w, v);
    for (int i = 0; i < w && i < TOP_HISTORY; i++) {
        unsigned p = v[i] == TOP_HIST_NONE ? 0 : v[i];
        if (t->utf8)
            mvaddstr(y, x + i, blocks[p * 8 / 1000]);
        else
            mvaddch(y, x + i, (chtype)ascii[p * 9 / 1000]);
    }
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

/* "1.2 GB/s", "340 MB/s", "12 KB/s" from KB/s */
static const char *rate(unsigned kbs, char *buf, size_t len)
{
    if (kbs >= 1000000)
        snprintf(buf, len, "%.1f GB/s", kbs / 1e6);
    else if (kbs >= 1000)
        snprintf(buf, len, "%u MB/s", kbs / 1000);
    else
        snprintf(buf, len, "%u KB/s", kbs);
    return buf;
}

/* One meter of the third line: its text, and the series of its graph
 * (TOP_H_COUNT: none); off where the driver gave no figure. */
struct meter {
    bool on;
    enum top_series graph;
    char text[64];
};

__attribute__((format(printf, 4, 5))) static void meter(struct meter *m, bool on,
                                                        enum top_series graph, const char *fmt,
                                                        ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->text, sizeof m->text, fmt, ap);
    va_end(ap);
    m->on = on;
    m->graph = graph;
}

/* The meters from the third line, over lines lines: each with its graph
 * where it has one, left to right while they fit. */
static void draw_meters(const struct top *t, int y, int lines, int cols, const struct snap_gpu *g)
{
    int x = 3, gw = cols >= 160 ? 20 : cols >= 120 ? 12 : 8, end = y + lines;
    unsigned h = g->have;
    char r1[24], r2[24];
    struct meter m[8];
    bool limit = h & SNAP_HAVE_POWER_LIMIT;
    /* utilization and memory bandwidth: the driver's two percents */
    meter(&m[0], h & SNAP_HAVE_UTIL, TOP_H_UTIL, "GPU %3u%%", g->util_gpu);
    meter(&m[1], h & SNAP_HAVE_UTIL, TOP_H_MBW, "MBW %3u%%", g->util_mem);
    meter(&m[2], h & SNAP_HAVE_TEMP, TOP_H_COUNT, "%uC", g->temp_c);
    if (limit)
        meter(&m[3], h & SNAP_HAVE_POWER, TOP_H_POWER, "%u/%u W", (g->power_mw + 500) / 1000,
              (g->power_limit_mw + 500) / 1000);
    else
        meter(&m[3], h & SNAP_HAVE_POWER, TOP_H_COUNT, "%u W", (g->power_mw + 500) / 1000);
    if (h & SNAP_HAVE_MAX_CLOCKS)
        meter(&m[4], h & SNAP_HAVE_CLOCKS, TOP_H_COUNT, "SM %u/%u MHz  MEM %u MHz",
              g->clock_sm_mhz, g->max_sm_mhz, g->clock_mem_mhz);
    else
        meter(&m[4], h & SNAP_HAVE_CLOCKS, TOP_H_COUNT, "SM %u MHz  MEM %u MHz", g->clock_sm_mhz,
              g->clock_mem_mhz);
    meter(&m[5], h & SNAP_HAVE_PCIE_THROUGHPUT, TOP_H_COUNT, "PCIe rx %s tx %s",
          rate(g->pcie_rx_kbs, r1, sizeof r1), rate(g->pcie_tx_kbs, r2, sizeof r2));
    meter(&m[6], h & SNAP_HAVE_ENCODER, TOP_H_COUNT, "ENC %u%%", g->enc_util);
    meter(&m[7], h & SNAP_HAVE_DECODER, TOP_H_COUNT, "DEC %u%%", g->dec_util);
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        if (!m[i].on)
            continue;
        int len = (int)strlen(m[i].text), graph = m[i].graph != TOP_H_COUNT;
        if (x + len + (graph ? gw + 1 : 0) > cols && x > 3 && y + 1 < end)
            y++, x = 3; /* on the next line */
        if (x + len + (graph ? gw + 1 : 0) > cols)
            break; /* meters keep their order: none after one that did not fit */
        mvaddstr(y, x, m[i].text);
        x += len;
        if (graph) {
            top_gpu_graph(t, y, x + 1, gw, g->index, m[i].graph);
            x += gw + 1;
        }
        x += 2;
    }
}

void top_gpu_draw(const struct top *t, int y, int cols, const struct snap_gpu *g, int lines)
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
    int x = 36, hist_w = top_gpu_hist_width(cols);
    /* on one line, the utilization beside the bar: the meters' line is gone */
    int util_w = lines == 1 && (g->have & SNAP_HAVE_UTIL) ? 5 : 0;
    int bar_w = (hist_w ? cols - x - 2 - hist_w - 1 : cols - x - 2) - util_w;
    if (bar_w > 0)
        draw_bar(t, y, x, bar_w, &a);
    if (util_w && bar_w > 0)
        mvprintw(y, x + bar_w + 2, " %3u%%", g->util_gpu);
    if (hist_w)
        top_gpu_graph(t, y, cols - hist_w, hist_w, g->index, TOP_H_MEMORY);
    if (lines < 2)
        return;
    char b[6][16];
    mvprintw(y + 1, 3, "reserved %s  display %s  work %s  other %s  unattributed %s GiB",
             units_fmt_gib(a.reserved, b[0], 16), units_fmt_gib(a.display, b[1], 16),
             units_fmt_gib(a.workloads, b[2], 16), units_fmt_gib(a.other, b[3], 16),
             units_fmt_gib(a.unattributed, b[4], 16));
    if (lines < 3) { /* the meters' first figures where the line has room */
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
        return;
    }
    draw_meters(t, y + 2, lines - 2, cols, g);
}
