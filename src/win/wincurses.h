/* wincurses: the few curses calls `vram top`'s drawing uses
 * (top/top_draw.c), into a screen buffer that wincurses_show prints: as a
 * plain frame (vram top --once, a file) or over the console's last frame
 * with ANSI sequences. Linux's top and Windows's draw with the same code. */
#ifndef VRAM_WIN_WINCURSES_H
#define VRAM_WIN_WINCURSES_H

#include <stdbool.h>
#include <stdio.h>

typedef unsigned chtype;

typedef struct wincurses_screen WINDOW;
extern WINDOW *stdscr;

#define A_NORMAL    0u
#define A_BOLD      (1u << 16)
#define A_REVERSE   (1u << 17)
#define A_DIM       (1u << 18)
#define A_UNDERLINE (1u << 19)
#define A_COLOR     0xFF00u
#define COLOR_PAIR(n) ((chtype)(n) << 8 & A_COLOR)

/* the keys top_keys.c answers, with ncurses's codes (win/wintop.c turns
 * the console's into these) */
#define KEY_DOWN      0402
#define KEY_UP        0403
#define KEY_HOME      0406
#define KEY_BACKSPACE 0407
#define KEY_F0        0410
#define KEY_F(n)      (KEY_F0 + (n))
#define KEY_NPAGE     0522
#define KEY_PPAGE     0523
#define KEY_ENTER     0527
#define KEY_END       0550

enum {
    COLOR_BLACK,
    COLOR_RED,
    COLOR_GREEN,
    COLOR_YELLOW,
    COLOR_BLUE,
    COLOR_MAGENTA,
    COLOR_CYAN,
    COLOR_WHITE
};

/* A screen of rows x cols; with ansi, wincurses_show draws over the last
 * frame and in colour. 0, or -1 on no memory. */
int wincurses_open(int rows, int cols, bool ansi);
void wincurses_close(void);
/* Prints the buffer to out. */
void wincurses_show(FILE *out);

int wincurses_rows(void);
int wincurses_cols(void);
#define getmaxyx(w, y, x) ((void)(w), (y) = wincurses_rows(), (x) = wincurses_cols())
int getcurx(WINDOW *w);
int getcury(WINDOW *w);

int init_pair(short pair, short fg, short bg);
bool has_colors(void);
int erase(void);
int clear(void);
int refresh(void);
int move(int y, int x);
int attron(unsigned a);
int attroff(unsigned a);
int attrset(unsigned a);
int addch(chtype ch);
int addstr(const char *s);
int printw(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int mvaddch(int y, int x, chtype ch);
int mvaddstr(int y, int x, const char *s);
int mvprintw(int y, int x, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int clrtoeol(void);
int mvhline(int y, int x, chtype ch, int n);

#endif
