/* wincurses: a screen buffer with curses's calls, for top's drawing on
 * Windows. Each cell holds one character (up to 4 bytes of UTF-8: the
 * history's block characters) and its attributes; writing past the edge
 * is cut, as curses does. */
#include "win/wincurses.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct cell {
    char ch[5];
    unsigned attr;
};

struct wincurses_screen {
    int rows, cols, y, x;
    unsigned attr;
    bool ansi, shown;
    struct cell *cells;
    short pairs[256][2];
};

static struct wincurses_screen screen;
WINDOW *stdscr = &screen;

int wincurses_open(int rows, int cols, bool ansi)
{
    wincurses_close();
    screen.cells = calloc((size_t)rows * (size_t)cols, sizeof *screen.cells);
    if (!screen.cells)
        return -1;
    screen.rows = rows, screen.cols = cols, screen.ansi = ansi;
    erase();
    return 0;
}

void wincurses_close(void)
{
    free(screen.cells);
    memset(&screen, 0, sizeof screen);
}

int wincurses_rows(void)
{
    return screen.rows;
}

int wincurses_cols(void)
{
    return screen.cols;
}

int getcurx(WINDOW *w)
{
    return w->x;
}

int getcury(WINDOW *w)
{
    return w->y;
}

int init_pair(short pair, short fg, short bg)
{
    if (pair <= 0 || pair > 255)
        return -1;
    screen.pairs[pair][0] = fg, screen.pairs[pair][1] = bg;
    return 0;
}

bool has_colors(void)
{
    return screen.ansi;
}

int erase(void)
{
    for (int i = 0; i < screen.rows * screen.cols; i++)
        screen.cells[i] = (struct cell){" ", 0};
    screen.y = screen.x = 0;
    return 0;
}

int clear(void)
{
    return erase();
}

int refresh(void)
{
    return 0; /* the caller shows the frame when it is whole */
}

int move(int y, int x)
{
    screen.y = y, screen.x = x;
    return 0;
}

int attron(unsigned a)
{
    screen.attr |= a;
    return 0;
}

int attroff(unsigned a)
{
    screen.attr &= ~a;
    return 0;
}

int attrset(unsigned a)
{
    screen.attr = a;
    return 0;
}

/* One character (its UTF-8 bytes) at the cursor, which moves on. */
static void put(const char *s, size_t n)
{
    if (screen.y >= 0 && screen.y < screen.rows && screen.x >= 0 && screen.x < screen.cols &&
        n < 5) {
        struct cell *c = &screen.cells[screen.y * screen.cols + screen.x];
        memcpy(c->ch, s, n);
        c->ch[n] = '\0';
        c->attr = screen.attr;
    }
    screen.x++;
}

int addstr(const char *s)
{
    while (*s) {
        size_t n = 1;
        unsigned char b = (unsigned char)*s;
        if (b >= 0xF0)
            n = 4;
        else if (b >= 0xE0)
            n = 3;
        else if (b >= 0xC0)
            n = 2;
        for (size_t k = 1; k < n; k++)
            if (((unsigned char)s[k] & 0xC0) != 0x80)
                n = 1; /* not UTF-8: one byte as it is */
        if (b < 0x20 || b == 0x7F)
            put("?", 1); /* a control character would move the console's cursor */
        else
            put(s, n);
        s += n;
    }
    return 0;
}

int addch(chtype ch)
{
    char c = (char)(ch & 0xFF);
    screen.attr |= ch & ~0xFFu;
    put(&c, 1);
    screen.attr &= ~(ch & ~0xFFu);
    return 0;
}

int mvaddch(int y, int x, chtype ch)
{
    move(y, x);
    return addch(ch);
}

int mvaddstr(int y, int x, const char *s)
{
    move(y, x);
    return addstr(s);
}

static int vprint(const char *fmt, va_list ap)
{
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    return addstr(buf);
}

int printw(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vprint(fmt, ap);
    va_end(ap);
    return rc;
}

int mvprintw(int y, int x, const char *fmt, ...)
{
    move(y, x);
    va_list ap;
    va_start(ap, fmt);
    int rc = vprint(fmt, ap);
    va_end(ap);
    return rc;
}

int clrtoeol(void)
{
    int y = screen.y, x = screen.x;
    for (int i = x; i < screen.cols; i++)
        put(" ", 1);
    move(y, x);
    return 0;
}

int mvhline(int y, int x, chtype ch, int n)
{
    move(y, x);
    for (int i = 0; i < n; i++)
        addch(ch);
    move(y, x);
    return 0;
}

/* The SGR sequence for a cell's attributes. */
static void sgr(FILE *out, unsigned a)
{
    fputs("\033[0", out);
    if (a & A_BOLD)
        fputs(";1", out);
    if (a & A_DIM)
        fputs(";2", out);
    if (a & A_UNDERLINE)
        fputs(";4", out);
    if (a & A_REVERSE)
        fputs(";7", out);
    unsigned pair = (a & A_COLOR) >> 8;
    if (pair)
        fprintf(out, ";%d;%d", 30 + screen.pairs[pair][0], 40 + screen.pairs[pair][1]);
    fputc('m', out);
}

void wincurses_show(FILE *out)
{
    if (screen.ansi)
        fputs("\033[H", out); /* over the last frame, from the top left */
    for (int y = 0; y < screen.rows; y++) {
        const struct cell *row = &screen.cells[y * screen.cols];
        int end = screen.cols;
        if (!screen.ansi) /* a plain frame: no trailing blanks */
            while (end > 0 && !strcmp(row[end - 1].ch, " "))
                end--;
        unsigned cur = 0;
        for (int x = 0; x < end; x++) {
            if (screen.ansi && row[x].attr != cur)
                sgr(out, cur = row[x].attr);
            fputs(row[x].ch, out);
        }
        if (screen.ansi && cur)
            fputs("\033[0m", out);
        if (y + 1 < screen.rows || !screen.ansi)
            fputs("\n", out);
    }
    fflush(out);
}
