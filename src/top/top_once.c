/* top_once: the hidden screen and its printing. ncurses keeps every cell
 * of what was drawn (character, attributes, colour pair); a frame is read
 * back cell by cell after top_draw, so --once shows exactly what the live
 * view would. */
#include "top/top_once.h"

#include <curses.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <wchar.h>

static SCREEN *screen;
static FILE *devnull;

static int env_int(const char *name)
{
    const char *v = getenv(name);
    char *end;
    long n = v ? strtol(v, &end, 10) : 0;
    return v && *v && !*end && n > 0 && n < 10000 ? (int)n : 0;
}

void top_once_size(FILE *out, int *rows, int *cols)
{
    struct winsize ws;
    *rows = 24, *cols = 80;
    if (isatty(fileno(out)) && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_row >= 5 &&
        ws.ws_col >= 40)
        *rows = ws.ws_row, *cols = ws.ws_col;
    if (env_int("LINES") >= 5)
        *rows = env_int("LINES");
    if (env_int("COLUMNS") >= 40)
        *cols = env_int("COLUMNS");
}

int top_once_open(int rows, int cols, char *err, size_t len)
{
    devnull = fopen("/dev/null", "w+");
    /* xterm's description ships with ncurses (ncurses-base, essential) */
    screen = devnull ? newterm("xterm", devnull, devnull) : NULL;
    if (!screen) {
        snprintf(err, len, "cannot make a screen to draw in (no terminfo for xterm: install "
                           "ncurses-base)");
        if (devnull)
            fclose(devnull);
        devnull = NULL;
        return -1;
    }
    resizeterm(rows, cols);
    start_color();
    use_default_colors();
    return 0;
}

/* SGR for a cell's attributes and pair, from a clean state, into buf. */
static size_t sgr(char *buf, size_t len, attr_t a, short pair)
{
    short fg = -1, bg = -1;
    int n = snprintf(buf, len, "\033[0%s%s%s%s", a & A_BOLD ? ";1" : "", a & A_DIM ? ";2" : "",
                     a & A_UNDERLINE ? ";4" : "", a & A_REVERSE ? ";7" : "");
    if (pair > 0 && pair_content(pair, &fg, &bg) == OK) {
        if (fg >= 0 && fg < 8)
            n += snprintf(buf + n, len - (size_t)n, ";%d", 30 + fg);
        if (bg >= 0 && bg < 8)
            n += snprintf(buf + n, len - (size_t)n, ";%d", 40 + bg);
    }
    n += snprintf(buf + n, len - (size_t)n, "m");
    return (size_t)n;
}

/* Row y of the screen as UTF-8 into line, trailing blanks cut. */
static void read_row(int y, int cols, bool color, char *line, size_t size)
{
    size_t len = 0, end = 0; /* end: after the last cell that shows */
    attr_t cur_a = 0;
    short cur_p = 0;
    for (int x = 0; x < cols && len + 64 < size; x++) {
        cchar_t cc;
        wchar_t wch[CCHARW_MAX + 1] = {0};
        attr_t a = 0;
        short pair = 0;
        if (mvin_wch(y, x, &cc) == ERR || getcchar(&cc, wch, &a, &pair, NULL) == ERR)
            wch[0] = L' ';
        a &= A_BOLD | A_DIM | A_UNDERLINE | A_REVERSE;
        if (color && (a != cur_a || pair != cur_p)) {
            len += sgr(line + len, size - len, a, pair);
            cur_a = a, cur_p = pair;
        }
        mbstate_t st;
        memset(&st, 0, sizeof st);
        size_t n = wcrtomb(line + len, wch[0] ? wch[0] : L' ', &st);
        if (n == (size_t)-1)
            line[len] = '?', n = 1;
        len += n;
        /* a blank shows when coloured or reversed */
        if ((wch[0] != L' ' && wch[0] != 0) || (color && (cur_a || cur_p)))
            end = len;
        if (wcwidth(wch[0]) == 2)
            x++; /* the next cell is this character's second half */
    }
    if (color && (cur_a || cur_p) && end + 5 < size) {
        memcpy(line + end, "\033[0m", 4);
        end += 4;
    }
    line[end] = '\0';
}

void top_once_print(struct top *t, FILE *out, bool color)
{
    int rows, cols;
    top_draw(t);
    getmaxyx(stdscr, rows, cols);
    size_t size = (size_t)cols * 24 + 64; /* a cell: 4 bytes of UTF-8 and its SGR */
    char *line = malloc(size);
    if (!line)
        return;
    /* blank lines are printed only when a line follows them */
    int blank = 0;
    for (int y = 0; y < rows; y++) {
        read_row(y, cols, color, line, size);
        if (!line[0]) {
            blank++;
            continue;
        }
        for (; blank; blank--)
            fputc('\n', out);
        fprintf(out, "%s\n", line);
    }
    free(line);
}

void top_once_close(void)
{
    if (!screen)
        return;
    endwin();
    delscreen(screen);
    fclose(devnull);
    screen = NULL;
    devnull = NULL;
}
