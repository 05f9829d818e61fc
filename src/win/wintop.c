/* wintop: the live view on Windows. The loop samples as Linux's does
 * (cli/top_view.c), and draws with top_draw into wincurses's buffer, shown
 * over the last frame; the keys are Linux's (cli/top_keys.c) once the
 * console's codes are turned into curses's. Signals, suspends and stops
 * are left to taskkill, which the keys name. --once prints a single frame
 * (or, with --json, the same as JSON), for scripts and for the tests that
 * run it under wine. */
#include <curses.h>

#include <windows.h>

#include <conio.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/render_json.h"
#include "cli/color.h"
#include "cli/top_draw.h"
#include "cli/top_json.h"
#include "cli/top_keys.h"
#include "cli/top_rows.h"
#include "cli/top_view.h"
#include "core/err.h"
#include "host/clock.h"
#include "probe/probe.h"
#include "win/wintop.h"

struct top_opts {
    struct top_view view;
};

static int cmd_top(const void *opts, int argc, char **argv);

#define O struct top_opts
static const struct cmd_opt top_opts[] = {
    TOP_VIEW_OPTS(O, view),
    {"color", 0, CMD_COLOR, .help = "colour: auto (unless NO_COLOR is set), always, never"},
    {NULL},
};
#undef O

const struct cmd_entry wintop_entry = {
    .name = "top",
    .args = "[--interval SECONDS] [--once [--json]] [--sort COLUMN] [--reverse] [--tree] "
            "[--filter TEXT] [--color WHEN]",
    .summary = "live view of VRAM per GPU and per process",
    .opts = top_opts,
    .help = "Each GPU's bar splits its memory: r driver reserved, d desktop/display,\n"
            "w workloads, o other, u unattributed, . free. Memory and each process's\n"
            "share of the GPU are read every interval; process lists every 3 intervals.\n"
            "\n"
            "keys: up/down (j/k) select   s, <, > sort by a column   S reverse it\n"
            "      v tree   / filter   Enter details   + / - interval   q quit\n"
            "      (taskkill /PID N ends a process)\n",
    .size = sizeof(struct top_opts),
    .defaults = &(const struct top_opts){.view = TOP_VIEW_DEFAULTS},
    .exec = cmd_top,
};

static struct probe *probe;

static int host(void *ctx, struct snap_proc *p)
{
    return probe_host(ctx, p);
}

static void detail(struct top *t, const struct top_row *r)
{
    struct probe_detail d;
    memset(&t->info, 0, sizeof t->info);
    t->info.pid = r->proc.pid;
    if (probe_detail(probe, r->proc.pid, &d) == 0) {
        snprintf(t->info.cmdline, sizeof t->info.cmdline, "%s", d.cmdline);
        t->info.have = true;
    }
}

static int env_int(const char *name)
{
    const char *v = getenv(name);
    char *end;
    long n = v ? strtol(v, &end, 10) : 0;
    return v && *v && !*end && n > 0 && n < 10000 ? (int)n : 0;
}

/* The console's visible size; elsewhere $LINES x $COLUMNS where set, else
 * 24x80, as on Linux (cli/top_once.c). */
static bool console_size(int *rows, int *cols)
{
    CONSOLE_SCREEN_BUFFER_INFO ci;
    *rows = env_int("LINES") >= 5 ? env_int("LINES") : 24;
    *cols = env_int("COLUMNS") >= 40 ? env_int("COLUMNS") : 80;
    if (!GetConsoleScreenBufferInfo(GetStdHandle(STD_OUTPUT_HANDLE), &ci))
        return false;
    *rows = ci.srWindow.Bottom - ci.srWindow.Top + 1;
    *cols = ci.srWindow.Right - ci.srWindow.Left + 1;
    if (*rows < 5 || *cols < 40)
        *rows = 24, *cols = 80;
    return true;
}

/* A key from the console in curses's codes: the arrows and their kin come
 * as 0 or 0xE0 then a scan code. 0 when none is waiting. */
static int read_key(void)
{
    if (!_kbhit())
        return 0;
    int ch = _getch();
    if (ch != 0 && ch != 0xE0)
        return ch == '\r' ? '\n' : ch == 8 ? KEY_BACKSPACE : ch;
    switch (_getch()) {
    case 0x48:
        return KEY_UP;
    case 0x50:
        return KEY_DOWN;
    case 0x49:
        return KEY_PPAGE;
    case 0x51:
        return KEY_NPAGE;
    case 0x47:
        return KEY_HOME;
    case 0x4F:
        return KEY_END;
    case 0x3F:
        return KEY_F(5);
    default:
        return 0;
    }
}

static int sample(struct top *t, unsigned what)
{
    int rc = probe_sample(probe, &t->snap, what, clock_wall_ms());
    if (rc == VRAM_OK)
        top_view_took(t, what);
    return rc;
}

static void loop(struct top *t)
{
    struct top_cadence c = {0};
    uint64_t next = 0;
    fputs("\033[2J", stdout); /* a clean console under the first frame */
    for (;;) {
        uint64_t now = clock_mono_ms();
        if (now >= next) {
            uint64_t step = (uint64_t)(t->interval * 1000);
            sample(t, top_view_what(&c, now, step));
            next = now + step;
            top_draw(t);
            wincurses_show(stdout);
        }
        int ch = read_key();
        if (ch == TOP_KEY_ESC && !t->typing && !t->detail && !t->help && !t->asking)
            ch = 'q'; /* Esc quits here, as it always did */
        if (ch && !top_key(t, ch))
            break;
        if (ch) {
            top_draw(t);
            wincurses_show(stdout);
        } else {
            Sleep(50);
        }
    }
}

/* --once: two samples an interval apart, as on Linux, then the frame or
 * the JSON. */
static int once(struct top *t, bool json)
{
    unsigned what = PROBE_ALL | PROBE_METERS | PROBE_PCIE | PROBE_ACTIVITY;
    if (sample(t, what) != VRAM_OK)
        return 1;
    Sleep((DWORD)(t->interval * 1000));
    if (sample(t, what) != VRAM_OK)
        return 1;
    if (json) {
        json_t *doc = top_json(t);
        int rc = doc && json_dumpf(doc, stdout, JSON_COMPACT | RENDER_JSON_REALS) == 0 ? 0 : 1;
        json_decref(doc);
        fputc('\n', stdout);
        return rc;
    }
    top_draw(t);
    wincurses_show(stdout);
    return 0;
}

static int cmd_top(const void *opts, int argc, char **argv)
{
    (void)argc, (void)argv;
    const struct top_opts *o = opts;
    static const struct top_ops ops = {NULL, detail, host, NULL, "taskkill /PID N ends a process"};
    struct top t;
    memset(&t, 0, sizeof t);
    bool once_only = o->view.once || o->view.json;
    int rows, cols;
    bool console = console_size(&rows, &cols);
    if (!once_only && (!console || !_isatty(_fileno(stdin)))) {
        fprintf(stderr, "vram top: needs a console; for scripts use vram status --watch "
                        "or vram top --once\n");
        return 2;
    }
    char err[512];
    int rc = probe_open(&probe, NULL, err, sizeof err);
    if (rc < 0)
        return cmd_no_driver(&wintop_entry, err, rc);
    struct top_ops with = ops;
    with.host_ctx = probe;
    t.ops = &with;
    if ((rc = top_view_start(&t, &o->view, "top")) != 0) {
        probe_close(probe);
        return rc;
    }
    t.color = color_on(stdout);
    t.utf8 = true; /* the console takes UTF-8 (winmain.c), and so does a file */
    if (wincurses_open(rows, cols, console && !once_only ? true : t.color) < 0) {
        probe_close(probe);
        return 1;
    }
    if (once_only) {
        rc = once(&t, o->view.json);
    } else {
        loop(&t);
        fputs("\033[0m\n", stdout);
    }
    wincurses_close();
    probe_exiting(probe);
    top_free(&t);
    probe_close(probe);
    return rc;
}
