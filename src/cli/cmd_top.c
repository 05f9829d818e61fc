/* cmd_top: `vram top`, the live view. The loop samples the cheap figures every
 * interval and the costly ones (process lists, /proc scan, fan) less often,
 * keeps a history of used memory per GPU, and lets the user signal one of
 * their own processes after confirming. */
#include "cli/top_draw.h"

#include <curses.h>
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/clock.h"
#include "cli/cmd.h"
#include "cli/color.h"
#include "core/err.h"
#include "core/units.h"
#include "host/proc.h"
#include "probe/probe.h"

struct top_opts {
    double interval;
    const char *procroot;
};

static int cmd_top(const void *opts, int argc, char **argv);

#define O struct top_opts
static const struct cmd_opt top_opts[] = {
    {"interval", 'd', CMD_SECONDS(O, interval, 0.1, 3600), .arg = "SECONDS",
     .fix = "give seconds from 0.1 to 3600", .help = "refresh every SECONDS (0.1 to 3600; default 1)"},
    {"proc-root", 0, CMD_STRING(O, procroot), .arg = "DIR",
     .help = "read processes from DIR instead of /proc"},
    CMD_COLOR_OPT,
    {NULL},
};
#undef O

const struct cmd_entry cmd_top_entry = {
    .name = "top",
    .args = "[--interval SECONDS] [--proc-root DIR] [--color WHEN]",
    .summary = "live view of VRAM per GPU and per process",
    .opts = top_opts,
    .help = "Each GPU's bar splits its memory: r driver reserved, d desktop/display,\n"
            "w workloads, o other, u unattributed, . free. Memory is read every interval;\n"
            "process lists every 3 intervals; /proc/*/fd, modes and links every 10 s, to\n"
            "leave the driver alone.\n"
            "\n"
            "Beside each bar, the GPU's used memory over the last samples (one a\n"
            "column, the span above it: a full block is the whole card).\n"
            "\n"
            "keys: up/down (j/k) select   s sort (memory, pid, name, gpu)   S reverse it\n"
            "      t send TERM   K send KILL (asks y/n; your own processes only unless\n"
            "      root)   + / - interval   ? or h help   q quit\n",
    .size = sizeof(struct top_opts),
    .defaults = &(const struct top_opts){.interval = 1.0, .procroot = "/proc"},
    .exec = cmd_top,
};

const char *top_sort_name(enum top_sort s)
{
    static const char *const names[] = {"memory", "pid", "name", "gpu"};
    return s < TOP_SORT_COUNT ? names[s] : "?";
}

static enum top_sort sort_key;
static bool sort_reverse;

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
    return sort_reverse ? -c : c;
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
    sort_reverse = t->reverse;
    qsort(rows, n, sizeof *rows, row_cmp);
    free(t->rows);
    t->rows = rows;
    t->nrows = n;
    t->sel = 0;
    for (size_t i = 0; i < n; i++) /* keep the selection on the same process */
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

/* Signals only what the user may: their own processes (any when root), still
 * the same process (pid reuse: the start time must match) and never pid 1. */
static void send_signal(struct top *t)
{
    const struct snap_proc *p = &t->confirm_row.proc;
    struct hostproc_ctx ctx;
    hostproc_init(&ctx, "/proc");
    struct snap_proc now = *p;
    if (p->pid <= 1 || !p->host_known) {
        snprintf(t->msg, sizeof t->msg, "pid %u: not a process vram may signal", p->pid);
    } else if (t->uid != 0 && p->uid != t->uid) {
        snprintf(t->msg, sizeof t->msg,
                 "pid %u belongs to %s: only root signals other users' "
                 "processes",
                 p->pid, p->user);
    } else if (hostproc_fill(&ctx, &now) < 0 || now.start_time != p->start_time) {
        snprintf(t->msg, sizeof t->msg, "pid %u has exited; nothing sent", p->pid);
    } else if (kill((pid_t)p->pid, t->confirm_sig) < 0) {
        snprintf(t->msg, sizeof t->msg, "pid %u: %s", p->pid, strerror(errno));
    } else {
        snprintf(t->msg, sizeof t->msg, "sent %s to %u (%s)",
                 t->confirm_sig == SIGKILL ? "KILL" : "TERM", p->pid, p->name);
    }
    t->confirm_sig = 0;
}

static bool handle_key(struct top *t, int ch)
{
    if (t->help) { /* any key closes it; q still quits */
        t->help = false;
        return ch != 'q' && ch != 'Q';
    }
    if (t->confirm_sig) {
        if (ch == 'y' || ch == 'Y')
            send_signal(t);
        else
            snprintf(t->msg, sizeof t->msg, "nothing sent"), t->confirm_sig = 0;
        return true;
    }
    switch (ch) {
    case 'q':
    case 'Q':
        return false;
    case KEY_UP:
    case 'k':
        if (t->sel > 0)
            t->sel--;
        break;
    case KEY_DOWN:
    case 'j':
        if (t->sel + 1 < t->nrows)
            t->sel++;
        break;
    case KEY_PPAGE:
        t->sel = t->sel > 10 ? t->sel - 10 : 0;
        break;
    case KEY_NPAGE:
        t->sel = t->sel + 10 < t->nrows ? t->sel + 10 : (t->nrows ? t->nrows - 1 : 0);
        break;
    case 's':
        t->sort = (enum top_sort)((t->sort + 1) % TOP_SORT_COUNT);
        rebuild_rows(t);
        snprintf(t->msg, sizeof t->msg, "sorted by %s%s", top_sort_name(t->sort),
                 t->reverse ? ", reversed" : "");
        break;
    case 'S':
        t->reverse = !t->reverse;
        rebuild_rows(t);
        snprintf(t->msg, sizeof t->msg, "sorted by %s%s", top_sort_name(t->sort),
                 t->reverse ? ", reversed" : "");
        break;
    case '?':
    case 'h':
        t->help = true;
        break;
    case 't':
    case 'K':
        if (!t->nrows) {
            snprintf(t->msg, sizeof t->msg, "no process selected");
            break;
        }
        t->confirm_row = t->rows[t->sel];
        t->confirm_sig = ch == 'K' ? SIGKILL : SIGTERM;
        snprintf(t->msg, sizeof t->msg, "send %s to %u (%s)? y/n", ch == 'K' ? "KILL" : "TERM",
                 t->confirm_row.proc.pid, t->confirm_row.proc.name);
        break;
    case '+':
        t->interval = t->interval * 2 > 3600 ? 3600 : t->interval * 2;
        snprintf(t->msg, sizeof t->msg, "interval %.1f s", t->interval);
        break;
    case '-':
        t->interval = t->interval / 2 < 0.1 ? 0.1 : t->interval / 2;
        snprintf(t->msg, sizeof t->msg, "interval %.1f s", t->interval);
        break;
    default:
        break;
    }
    return true;
}

/* The terminal taken over by curses, in colour when it can. */
static void screen_open(struct top *t)
{
    /* only top needs the locale (ncurses draws the bars in UTF-8): the
     * other commands skip loading it, and print numbers the same anywhere */
    setlocale(LC_CTYPE, "");
    t->utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    initscr();
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    t->color = has_colors() && color_on(stdout);
    if (t->color) {
        start_color();
        use_default_colors();
    }
}

/* What the next sample reads: memory every interval, process lists every
 * 3 intervals (5 s at most), the costly refreshes every 10 s, 5 s apart so
 * that no one sample pays for both (bench/RESULTS.md: under 1 ms of CPU
 * each). */
struct cadence {
    uint64_t procs, holders, slow; /* when each was last read */
};

static unsigned sample_what(struct cadence *c, uint64_t now, uint64_t step)
{
    unsigned what = PROBE_MEMORY;
    if (!c->procs || now - c->procs >= 3 * step || now - c->procs >= 5000)
        what |= PROBE_PROCS, c->procs = now;
    if (!c->slow || now - c->slow >= 10000)
        what |= PROBE_SLOW, c->slow = now;
    if (!c->holders)
        what |= PROBE_HOLDERS, c->holders = now - 5000;
    else if (now - c->holders >= 10000)
        what |= PROBE_HOLDERS, c->holders = now;
    return what;
}

/* Samples and draws every interval, and answers keys, until q. */
static void top_loop(struct top *t, struct probe *p)
{
    struct cadence c = {0};
    uint64_t next = 0;
    for (;;) {
        uint64_t now = clock_mono_ms();
        if (now >= next) {
            uint64_t step = (uint64_t)(t->interval * 1000);
            unsigned what = sample_what(&c, now, step);
            if (probe_sample(p, &t->snap, what, clock_wall_ms()) == VRAM_OK) {
                record_history(t);
                if (what & PROBE_PROCS)
                    rebuild_rows(t);
            }
            next = now + step;
            top_draw(t);
        }
        int wait = (int)(next > now ? next - now : 0);
        timeout(wait > 1000 ? 1000 : wait);
        int ch = getch();
        if (ch == ERR)
            continue;
        if (!handle_key(t, ch))
            break;
        top_draw(t);
    }
}

static int cmd_top(const void *opts, int argc, char **argv)
{
    (void)argc, (void)argv;
    const struct top_opts *o = opts;
    struct top t;
    memset(&t, 0, sizeof t);
    t.interval = o->interval;
    /* the driver first: without one, the hint for scripts would fail too */
    char err[512];
    struct probe *p;
    int rc = probe_open(&p, o->procroot, err, sizeof err);
    if (rc < 0)
        return cmd_no_driver(&cmd_top_entry, err, rc);
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr,
                "vram top: needs a terminal; for scripts use vram status --watch 1 (every second)\n");
        probe_exiting(p);
        probe_close(p);
        return 2;
    }
    t.uid = getuid();
    screen_open(&t);
    top_loop(&t, p);
    endwin();
    probe_exiting(p);
    free(t.rows);
    free(t.hist);
    snap_free(&t.snap);
    probe_close(p);
    return 0;
}
