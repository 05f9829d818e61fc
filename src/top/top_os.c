/* top_os: `vram top` on Linux, below the command (top/top_os.h): curses on
 * the terminal, the keys and the children top runs (top_actions.c) waited
 * on at once in poll, and --once's frame drawn into a hidden curses screen
 * (top_once.c). */
#include "top/top_os.h"

#include <curses.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "cli/color.h"
#include "top/top_actions.h"
#include "top/top_once.h"

const struct top_ops *top_os_ops(struct probe *p, bool may_act)
{
    return top_actions_ops(p, may_act);
}

void top_os_away(struct top *t)
{
    top_actions_away(t);
}

bool top_os_can_show(void)
{
    if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
        return true;
    fprintf(stderr, "vram top: needs a terminal; for scripts use vram top --once (or "
                    "--json), or vram status --watch 1 (every second)\n");
    return false;
}

void top_os_start(struct top *t)
{
    t->uid = getuid();
    /* only top needs the locale (ncurses draws the bars in UTF-8): the
     * other commands skip loading it, and print numbers the same anywhere */
    setlocale(LC_CTYPE, "");
    t->utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
}

/* The terminal taken over by curses, in colour when it can. */
int top_os_open(struct top *t)
{
    initscr();
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE); /* the loop waits in poll, on the keys and the children */
    set_escdelay(25);      /* Esc closes a pane at once, not after a second */
    curs_set(0);
    t->color = has_colors() && color_on(stdout);
    if (t->color) {
        start_color();
        use_default_colors();
    }
    return 0;
}

/* top_draw refreshes the terminal itself */
void top_os_show(void)
{
}

bool top_os_wait(struct top *t, uint64_t ms)
{
    struct pollfd fds[4] = {{.fd = STDIN_FILENO, .events = POLLIN}};
    int n = 1 + top_actions_fds(fds + 1, 3);
    if (top_actions_busy() && ms > 100)
        ms = 100; /* a child whose output ended is reaped soon after */
    poll(fds, (nfds_t)n, (int)ms);
    return top_actions_poll(t);
}

int top_os_key(const struct top *t)
{
    (void)t;
    int ch = getch();
    return ch == ERR ? -1 : ch;
}

void top_os_close(void)
{
    endwin();
}

int top_os_frame(struct top *t, FILE *out)
{
    int rows, cols;
    char err[200];
    top_once_size(out, &rows, &cols);
    if (top_once_open(rows, cols, err, sizeof err) < 0) {
        fprintf(stderr, "vram top: %s\n", err);
        return 1;
    }
    t->color = color_on(out);
    top_once_print(t, out, t->color);
    top_once_close();
    return 0;
}

void top_os_end(void)
{
    top_actions_end();
}
