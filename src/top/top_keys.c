/* top_keys: the keys, one switch; the questions and the typed line. */
#include "top/top_keys.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "top/top_rows.h"

int top_set_filter(struct top *t, const char *text)
{
    char err[200];
    struct top_filter f;
    if (top_filter_parse(text, &f, err, sizeof err) < 0) {
        snprintf(t->msg, sizeof t->msg, "filter: %s", err);
        return -1;
    }
    t->filter = f;
    snprintf(t->filter_text, sizeof t->filter_text, "%s", text);
    top_rows_rebuild(t);
    if (text[0])
        snprintf(t->msg, sizeof t->msg, "%zu of %zu processes match '%s' (/ and Enter: all)",
                 t->nrows, t->total, text);
    else
        snprintf(t->msg, sizeof t->msg, "every process");
    return 0;
}

/* The line after /: Enter applies it, Esc drops it. */
static void typing(struct top *t, int ch)
{
    size_t len = strlen(t->typed);
    if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
        if (top_set_filter(t, t->typed) == 0)
            t->typing = false;
    } else if (ch == TOP_KEY_ESC) {
        t->typing = false;
        snprintf(t->msg, sizeof t->msg, "filter unchanged");
    } else if (ch == 21) { /* Ctrl-U, as in a shell: the whole line */
        t->typed[0] = '\0';
    } else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
        if (len)
            t->typed[len - 1] = '\0';
    } else if (ch >= 32 && ch < 127 && len + 1 < sizeof t->typed) {
        t->typed[len] = (char)ch;
        t->typed[len + 1] = '\0';
    }
}

/* each verb as a question asks it, and as a refusal names it */
static const char *const asked[] = {"send TERM to", "send KILL to", "suspend", "resume", "stop"};
static const char *const named[] = {"signal", "signal", "suspend", "resume", "stop"};

/* A verb on the selected row: asked first for the ones that end it. */
static void verb(struct top *t, enum top_verb v)
{
    if (!t->nrows) {
        snprintf(t->msg, sizeof t->msg, "no process selected");
        return;
    }
    if (!t->ops || !t->ops->act) {
        const char *instead = t->ops && t->ops->instead ? t->ops->instead : NULL;
        snprintf(t->msg, sizeof t->msg, "top cannot %s a process here%s%s", named[v],
                 instead ? "; " : "", instead ? instead : "");
        return;
    }
    const struct top_row *r = &t->rows[t->sel];
    if (v == TOP_SUSPEND || v == TOP_RESUME) {
        t->ops->act(t, v, r);
        return;
    }
    t->asking = true;
    t->ask_verb = v;
    t->ask_row = *r;
    if (v == TOP_STOP && r->proc.model[0])
        snprintf(t->msg, sizeof t->msg, "stop model %s of vram serve (vram unload)? y/n",
                 r->proc.model);
    else if (v == TOP_STOP)
        snprintf(t->msg, sizeof t->msg, "stop %u (%s) with TERM? y/n", r->proc.pid, r->proc.name);
    else
        snprintf(t->msg, sizeof t->msg, "%s %u (%s)? y/n", asked[v], r->proc.pid, r->proc.name);
}

static void move_sel(struct top *t, long by)
{
    long to = (long)t->sel + by;
    if (to < 0 || !t->nrows)
        to = 0;
    else if ((size_t)to >= t->nrows)
        to = (long)t->nrows - 1;
    t->sel = (size_t)to;
    if (t->detail && t->ops && t->ops->detail && t->nrows)
        t->ops->detail(t, &t->rows[t->sel]);
}

static void resort(struct top *t, int step)
{
    t->sort = (enum top_col)((t->sort + TOP_COL_COUNT + step) % TOP_COL_COUNT);
    top_rows_rebuild(t);
    top_rows_say_sort(t);
}

bool top_key(struct top *t, int ch)
{
    if (t->typing) {
        typing(t, ch);
        return true;
    }
    if (t->help) { /* any key closes it; q still quits */
        t->help = false;
        return ch != 'q' && ch != 'Q';
    }
    if (t->asking) {
        t->asking = false;
        if (ch == 'y' || ch == 'Y')
            t->ops->act(t, t->ask_verb, &t->ask_row);
        else
            snprintf(t->msg, sizeof t->msg, "nothing done");
        return true;
    }
    switch (ch) {
    case 'q':
    case 'Q':
        return false;
    case TOP_KEY_ESC:
        t->detail = false;
        break;
    case KEY_UP:
    case 'k':
        move_sel(t, -1);
        break;
    case KEY_DOWN:
    case 'j':
        move_sel(t, 1);
        break;
    case KEY_PPAGE:
        move_sel(t, -10);
        break;
    case KEY_NPAGE:
        move_sel(t, 10);
        break;
    case KEY_HOME:
    case 'g':
        move_sel(t, -(long)t->nrows);
        break;
    case KEY_END:
    case 'G':
        move_sel(t, (long)t->nrows);
        break;
    case 's':
    case '>':
        resort(t, 1);
        break;
    case '<':
        resort(t, -1);
        break;
    case 'S':
        t->reverse = !t->reverse;
        top_rows_rebuild(t);
        top_rows_say_sort(t);
        break;
    case 'v':
    case KEY_F(5):
        t->tree = !t->tree;
        top_rows_rebuild(t);
        snprintf(t->msg, sizeof t->msg, t->tree ? "tree: children under their parents"
                                                : "list: every process on its own");
        break;
    case '/':
        t->typing = true;
        t->msg[0] = '\0'; /* from now on, the message is why a filter was refused */
        snprintf(t->typed, sizeof t->typed, "%s", t->filter_text);
        break;
    case '\n':
    case '\r':
    case KEY_ENTER:
    case 'd':
        t->detail = !t->detail;
        if (t->detail && t->nrows && t->ops && t->ops->detail)
            t->ops->detail(t, &t->rows[t->sel]);
        break;
    case 't':
        verb(t, TOP_TERM);
        break;
    case 'K':
        verb(t, TOP_KILL);
        break;
    case 'p':
        verb(t, TOP_SUSPEND);
        break;
    case 'r':
        verb(t, TOP_RESUME);
        break;
    case 'x':
        verb(t, TOP_STOP);
        break;
    case '+':
        t->interval = t->interval * 2 > 3600 ? 3600 : t->interval * 2;
        snprintf(t->msg, sizeof t->msg, "interval %.1f s", t->interval);
        break;
    case '-':
        t->interval = t->interval / 2 < 0.1 ? 0.1 : t->interval / 2;
        snprintf(t->msg, sizeof t->msg, "interval %.1f s", t->interval);
        break;
    case '?':
    case 'h':
        t->help = true;
        break;
    default:
        break;
    }
    return true;
}
