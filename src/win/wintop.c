/* wintop: `vram top` on Windows, below the command (top/top_os.h): top_draw
 * draws into wincurses's buffer, shown over the last frame on the console;
 * the console's key codes are turned into curses's for top_keys.c.
 * Signals, suspends and stops are left to taskkill, which the keys name.
 * --once prints a single frame, for scripts and for the tests that run it
 * under wine. */
#include <curses.h>

#include <windows.h>

#include <conio.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/color.h"
#include "top/top_draw.h"
#include "top/top_keys.h"
#include "win/wintop.h"

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
 * 24x80, as on Linux (top/top_once.c). */
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
 * as 0 or 0xE0 then a scan code. 0 for one top does not know. */
static int read_key(void)
{
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

const struct top_ops *top_os_ops(struct probe *p, bool may_act)
{
    (void)may_act; /* top acts on no process here */
    static struct top_ops ops = {NULL, detail, host, NULL, "taskkill /PID N ends a process"};
    probe = p;
    ops.host_ctx = p;
    return &ops;
}

/* no vram suspend, no vram serve: no process is away from its GPU */
void top_os_away(struct top *t)
{
    (void)t;
}

bool top_os_can_show(void)
{
    int rows, cols;
    if (console_size(&rows, &cols) && _isatty(_fileno(stdin)))
        return true;
    fprintf(stderr, "vram top: needs a console; for scripts use vram status --watch "
                    "or vram top --once\n");
    return false;
}

/* the console takes UTF-8 (winmain.c), and so does a file */
void top_os_start(struct top *t)
{
    t->utf8 = true;
}

int top_os_open(struct top *t)
{
    int rows, cols;
    console_size(&rows, &cols);
    t->color = color_on(stdout);
    if (wincurses_open(rows, cols, true) < 0) {
        fprintf(stderr, "vram top: out of memory\n");
        return -1;
    }
    fputs("\033[2J", stdout); /* a clean console under the first frame */
    return 0;
}

void top_os_show(void)
{
    wincurses_show(stdout);
}

/* The console has no descriptor to wait on with the children's: a look at
 * the keyboard every 50 ms. */
bool top_os_wait(struct top *t, uint64_t ms)
{
    (void)t;
    for (uint64_t waited = 0; waited < ms && !_kbhit(); waited += 50)
        Sleep((DWORD)(ms - waited < 50 ? ms - waited : 50));
    return false;
}

int top_os_key(const struct top *t)
{
    while (_kbhit()) {
        int ch = read_key();
        if (ch == TOP_KEY_ESC && !t->typing && !t->detail && !t->help && !t->asking)
            ch = 'q'; /* Esc quits here, as it always did */
        if (ch)
            return ch;
    }
    return -1;
}

void top_os_close(void)
{
    fputs("\033[0m\n", stdout);
    wincurses_close();
}

int top_os_frame(struct top *t, FILE *out)
{
    int rows, cols;
    console_size(&rows, &cols);
    t->color = color_on(out);
    if (wincurses_open(rows, cols, t->color) < 0) {
        fprintf(stderr, "vram top: out of memory\n");
        return 1;
    }
    top_draw(t);
    wincurses_show(out);
    wincurses_close();
    return 0;
}

/* top started nothing here */
void top_os_end(void)
{
}
