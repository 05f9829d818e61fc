/* wintop: the live view on Windows. The loop samples as Linux's does
 * (memory every interval, process lists every 3), keeps the history of
 * used memory, and draws with top_draw into wincurses's buffer, shown over
 * the last frame. Keys: q, j/k, s, + and -; ending a process is left to
 * taskkill, which doctor names. --once prints a single frame, for scripts
 * and for the tests that run it under wine. */
#include <curses.h>

#include <windows.h>

#include <conio.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/clock.h"
#include "cli/color.h"
#include "cli/top_draw.h"
#include "core/err.h"
#include "core/units.h"
#include "probe/probe.h"
#include "win/wintop.h"

struct top_opts {
    double interval;
    bool once;
};

static int cmd_top(const void *opts, int argc, char **argv);

#define O struct top_opts
static const struct cmd_opt top_opts[] = {
    {"interval", 'd', CMD_SECONDS(O, interval, 0.1, 3600), .arg = "SECONDS",
     .fix = "give seconds from 0.1 to 3600", .help = "refresh every SECONDS (0.1 to 3600; default 1)"},
    {"once", '1', CMD_FLAG(O, once),
     .help = "print one frame and exit (80x24 unless a console gives its size)"},
    {"color", 0, CMD_COLOR, .help = "colour: auto (unless NO_COLOR is set), always, never"},
    {NULL},
};
#undef O

const struct cmd_entry wintop_entry = {
    .name = "top",
    .args = "[--interval SECONDS] [--once] [--color WHEN]",
    .summary = "live view of VRAM per GPU and per process",
    .opts = top_opts,
    .help = "Each GPU's bar splits its memory: r driver reserved, d desktop/display,\n"
            "w workloads, o other, u unattributed, . free. Memory is read every interval;\n"
            "process lists every 3 intervals.\n"
            "\n"
            "keys: up/down (j/k) select   s sort (memory, pid, name, gpu)\n"
            "      + / - interval   q quit   (taskkill /PID N ends a process)\n",
    .size = sizeof(struct top_opts),
    .defaults = &(const struct top_opts){.interval = 1.0},
    .exec = cmd_top,
};

static const char keys_line[] =
    "q quit  j/k select  s sort  +/- interval   r reserved d display w work o other u unattr";

const char *top_sort_name(enum top_sort s)
{
    static const char *const names[] = {"memory", "pid", "name", "gpu"};
    return s < TOP_SORT_COUNT ? names[s] : "?";
}

static enum top_sort sort_key;

static int row_cmp(const void *a, const void *b)
{
    const struct top_row *x = a, *y = b;
    int c = 0;
    switch (sort_key) {
    case TOP_SORT_MEMORY:
        c = x->proc.used == y->proc.used ? 0 : x->proc.used < y->proc.used ? 1 : -1;
        break;
    case TOP_SORT_NAME:
        c = strcmp(x->proc.name, y->proc.name);
        break;
    case TOP_SORT_GPU:
        c = x->gpu == y->gpu ? 0 : x->gpu < y->gpu ? -1 : 1;
        break;
    default:
        break;
    }
    if (c == 0)
        c = x->proc.pid == y->proc.pid ? 0 : x->proc.pid < y->proc.pid ? -1 : 1;
    return c;
}

static int rebuild_rows(struct top *t)
{
    uint32_t selected = t->nrows ? t->rows[t->sel].proc.pid : 0;
    size_t n = 0;
    for (size_t i = 0; i < t->snap.ngpus; i++)
        n += t->snap.gpus[i].nprocs;
    struct top_row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows)
        return -1;
    n = 0;
    for (size_t i = 0; i < t->snap.ngpus; i++)
        for (size_t j = 0; j < t->snap.gpus[i].nprocs; j++)
            rows[n++] = (struct top_row){(unsigned)i, t->snap.gpus[i].procs[j]};
    sort_key = t->sort;
    qsort(rows, n, sizeof *rows, row_cmp);
    free(t->rows);
    t->rows = rows;
    t->nrows = n;
    t->sel = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i].proc.pid == selected)
            t->sel = i;
    return 0;
}

static void record_history(struct top *t)
{
    if (!t->hist) {
        t->hist_n = t->snap.ngpus;
        t->hist = calloc(t->hist_n ? t->hist_n * TOP_HISTORY : 1, sizeof *t->hist);
        if (!t->hist)
            return;
    }
    for (size_t i = 0; i < t->hist_n && i < t->snap.ngpus; i++) {
        const struct snap_mem *m = &t->snap.gpus[i].mem;
        uint64_t used = m->total > m->free ? m->total - m->free : 0;
        t->hist[i * TOP_HISTORY + t->hist_pos] = m->total ? (uint16_t)(used * 1000 / m->total) : 0;
    }
    t->hist_pos = (t->hist_pos + 1) % TOP_HISTORY;
}

/* The console's visible size, or 24x80 when out is not a console. */
static bool console_size(int *rows, int *cols)
{
    CONSOLE_SCREEN_BUFFER_INFO ci;
    *rows = 24, *cols = 80;
    if (!GetConsoleScreenBufferInfo(GetStdHandle(STD_OUTPUT_HANDLE), &ci))
        return false;
    *rows = ci.srWindow.Bottom - ci.srWindow.Top + 1;
    *cols = ci.srWindow.Right - ci.srWindow.Left + 1;
    if (*rows < 5 || *cols < 40)
        *rows = 24, *cols = 80;
    return true;
}

static bool handle_key(struct top *t, int ch)
{
    switch (ch) {
    case 'q':
    case 'Q':
    case 27: /* Esc */
        return false;
    case 'k':
    case 0x48: /* up, after the 0xE0 prefix */
        if (t->sel > 0)
            t->sel--;
        break;
    case 'j':
    case 0x50: /* down */
        if (t->sel + 1 < t->nrows)
            t->sel++;
        break;
    case 's':
        t->sort = (enum top_sort)((t->sort + 1) % TOP_SORT_COUNT);
        rebuild_rows(t);
        break;
    case '+':
        t->interval = t->interval * 2 > 3600 ? 3600 : t->interval * 2;
        break;
    case '-':
        t->interval = t->interval / 2 < 0.1 ? 0.1 : t->interval / 2;
        break;
    default:
        break;
    }
    return true;
}

static int cmd_top(const void *opts, int argc, char **argv)
{
    (void)argc, (void)argv;
    const struct top_opts *o = opts;
    struct top t;
    memset(&t, 0, sizeof t);
    t.interval = o->interval;
    bool once = o->once;
    int rows, cols;
    bool console = console_size(&rows, &cols);
    if (!once && (!console || !_isatty(_fileno(stdin)))) {
        fprintf(stderr, "vram top: needs a console; for scripts use vram status --watch "
                        "or vram top --once\n");
        return 2;
    }
    char err[512];
    struct probe *p;
    int rc = probe_open(&p, NULL, err, sizeof err);
    if (rc < 0)
        return cmd_no_driver(&wintop_entry, err, rc);
    t.color = color_on(stdout);
    t.utf8 = true; /* the console takes UTF-8 (winmain.c), and so does a file */
    snprintf(t.msg, sizeof t.msg, "%s", keys_line);
    if (wincurses_open(rows, cols, console && !once ? true : t.color) < 0) {
        probe_close(p);
        return 1;
    }
    uint64_t next = 0, last_procs = 0;
    if (!once)
        fputs("\033[2J", stdout); /* a clean console under the first frame */
    for (;;) {
        uint64_t now = clock_mono_ms();
        if (now >= next) {
            uint64_t step = (uint64_t)(t.interval * 1000);
            unsigned what = PROBE_MEMORY;
            if (!last_procs || now - last_procs >= 3 * step || now - last_procs >= 5000)
                what |= PROBE_PROCS | PROBE_SLOW, last_procs = now;
            if (probe_sample(p, &t.snap, what, clock_wall_ms()) == VRAM_OK) {
                record_history(&t);
                if (what & PROBE_PROCS)
                    rebuild_rows(&t);
            }
            next = now + step;
            top_draw(&t);
            wincurses_show(stdout);
            if (once)
                break;
        }
        int ch = 0;
        while (_kbhit() && (ch = _getch()) && (ch == 0 || ch == 0xE0))
            ; /* the prefix of an arrow key: the next byte says which */
        if (ch && !handle_key(&t, ch))
            break;
        if (ch)
            top_draw(&t), wincurses_show(stdout);
        else
            Sleep(50);
    }
    if (!once)
        fputs("\033[0m\n", stdout);
    wincurses_close();
    probe_exiting(p);
    free(t.rows);
    free(t.hist);
    snap_free(&t.snap);
    probe_close(p);
    return 0;
}
