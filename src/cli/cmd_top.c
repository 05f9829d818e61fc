/* cmd_top: `vram top`, the live view. The loop samples the cheap figures
 * every interval and the costly ones (process lists, /proc scan, fan) less
 * often (top_view.c), keeps a history of each GPU's figures, answers keys
 * (top_keys.c) and the children top runs to suspend, resume or stop
 * (top_actions.c), waiting on the keyboard and their pipes at once.
 * --once prints one frame (top_once.c), or with --json the same as JSON. */
#include <curses.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app/render_json.h"
#include "cli/cmd.h"
#include "cli/color.h"
#include "cli/top_actions.h"
#include "cli/top_draw.h"
#include "cli/top_json.h"
#include "cli/top_keys.h"
#include "cli/top_once.h"
#include "cli/top_rows.h"
#include "cli/top_view.h"
#include "core/err.h"
#include "host/clock.h"
#include "probe/probe.h"

struct top_opts {
    struct top_view view;
    const char *procroot;
};

static int cmd_top(const void *opts, int argc, char **argv);

#define O struct top_opts
static const struct cmd_opt top_opts[] = {
    TOP_VIEW_OPTS(O, view),
    {"proc-root", 0, CMD_STRING(O, procroot), .arg = "DIR",
     .help = "read processes from DIR instead of /proc (then top signals, suspends and stops "
             "nothing)"},
    CMD_COLOR_OPT,
    {NULL},
};
#undef O

const struct cmd_entry cmd_top_entry = {
    .name = "top",
    .args = "[--interval SECONDS] [--once [--json]] [--sort COLUMN] [--reverse] [--tree] "
            "[--filter TEXT] [--proc-root DIR] [--color WHEN]",
    .summary = "live view of VRAM per GPU and per process",
    .opts = top_opts,
    .help = "Each GPU's bar splits its memory: r driver reserved, d desktop/display,\n"
            "w workloads, o other, u unattributed, . free; beside it, the used memory\n"
            "over the last samples. Under it, when the screen has room: the parts in\n"
            "figures, then utilization and memory bandwidth (with their graphs),\n"
            "temperature, power against its limit, clocks, PCIe throughput, the video\n"
            "engines. Per process: VRAM, its share of the SMs (SM%), of the memory\n"
            "bandwidth (MBW%), encoder and decoder, CPU %, host memory (RSS), running\n"
            "time. Memory and shares are read every interval; process lists every 3\n"
            "intervals; /proc/*/fd, modes and links every 10 s, to leave the driver alone.\n"
            "\n"
            "keys: up/down (j/k) select   s, <, > sort by a column   S reverse it\n"
            "      v tree   / filter   Enter details   p suspend   r resume\n"
            "      x stop (asks y/n; a model of vram serve is unloaded)   t TERM   K KILL\n"
            "      (asks y/n; your own processes only unless root, as vram suspend and kill)\n"
            "      + / - interval   ? or h help   q quit\n",
    .size = sizeof(struct top_opts),
    .defaults = &(const struct top_opts){.view = TOP_VIEW_DEFAULTS, .procroot = "/proc"},
    .exec = cmd_top,
};

/* One sample, vram serve's models marked, the list and histories updated. */
static int sample(struct top *t, struct probe *p, unsigned what, bool host)
{
    int rc = probe_sample(p, &t->snap, what, clock_wall_ms());
    if (rc != VRAM_OK)
        return rc;
    if (host && (what & PROBE_PROCS)) /* this machine's processes, not a --proc-root's */
        top_actions_away(t);
    top_view_took(t, what);
    return VRAM_OK;
}

/* The terminal taken over by curses, in colour when it can. */
static void screen_open(struct top *t)
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
}

/* Samples and draws every interval; answers keys and children, until q. */
static void top_loop(struct top *t, struct probe *p, bool host)
{
    struct top_cadence c = {0};
    uint64_t next = 0;
    for (;;) {
        uint64_t now = clock_mono_ms();
        if (now >= next) {
            uint64_t step = (uint64_t)(t->interval * 1000);
            sample(t, p, top_view_what(&c, now, step), host);
            next = now + step;
            top_draw(t);
        }
        struct pollfd fds[4] = {{.fd = STDIN_FILENO, .events = POLLIN}};
        int n = 1 + top_actions_fds(fds + 1, 3);
        uint64_t wait = next > now ? next - now : 0;
        if (top_actions_busy() && wait > 100)
            wait = 100; /* a child whose output ended is reaped soon after */
        poll(fds, (nfds_t)n, (int)wait);
        bool redraw = top_actions_poll(t);
        int ch;
        while ((ch = getch()) != ERR) {
            if (!top_key(t, ch))
                return;
            redraw = true;
        }
        if (redraw)
            top_draw(t);
    }
}

/* --once: two samples an interval apart (a CPU % needs two readings of
 * its time), then the frame or the JSON. */
static int once(struct top *t, struct probe *p, bool host, bool json)
{
    unsigned what = PROBE_ALL | PROBE_METERS | PROBE_PCIE | PROBE_ACTIVITY;
    if (sample(t, p, what, host) != VRAM_OK) {
        fprintf(stderr, "vram top: could not read the GPUs\n");
        return 1;
    }
    struct timespec ts = {(time_t)t->interval,
                          (long)((t->interval - (double)(time_t)t->interval) * 1e9)};
    nanosleep(&ts, NULL);
    if (sample(t, p, what & ~(unsigned)PROBE_HOLDERS, host) != VRAM_OK) {
        fprintf(stderr, "vram top: could not read the GPUs\n");
        return 1;
    }
    if (json) {
        json_t *doc = top_json(t);
        int rc = doc && json_dumpf(doc, stdout, JSON_COMPACT | RENDER_JSON_REALS) == 0 ? 0 : 1;
        json_decref(doc);
        fputc('\n', stdout);
        return rc;
    }
    int rows, cols;
    char err[200];
    top_once_size(stdout, &rows, &cols);
    if (top_once_open(rows, cols, err, sizeof err) < 0) {
        fprintf(stderr, "vram top: %s\n", err);
        return 1;
    }
    t->color = color_on(stdout);
    top_once_print(t, stdout, t->color);
    top_once_close();
    return 0;
}

static int cmd_top(const void *opts, int argc, char **argv)
{
    (void)argc, (void)argv;
    const struct top_opts *o = opts;
    bool once_only = o->view.once || o->view.json, host = !strcmp(o->procroot, "/proc");
    struct top t;
    memset(&t, 0, sizeof t);
    /* the driver first: without one, the hint for scripts would fail too */
    char err[512];
    struct probe *p;
    /* --once waits for the holders' scan (begun while NVML starts); the live
     * view takes it when it is done */
    int rc = probe_open_ahead(&p, o->procroot, once_only ? PROBE_HOLDERS : 0, err, sizeof err);
    if (rc < 0)
        return cmd_no_driver(&cmd_top_entry, err, rc);
    t.ops = top_actions_ops(p, host);
    if ((rc = top_view_start(&t, &o->view, "top")) != 0) {
        probe_close(p);
        return rc;
    }
    if (!once_only && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
        fprintf(stderr, "vram top: needs a terminal; for scripts use vram top --once (or "
                        "--json), or vram status --watch 1 (every second)\n");
        probe_exiting(p);
        probe_close(p);
        return 2;
    }
    t.uid = getuid();
    /* only top needs the locale (ncurses draws the bars in UTF-8): the
     * other commands skip loading it, and print numbers the same anywhere */
    setlocale(LC_CTYPE, "");
    t.utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    if (once_only) {
        rc = once(&t, p, host, o->view.json);
    } else {
        screen_open(&t);
        top_loop(&t, p, host);
        endwin();
    }
    top_actions_end();
    probe_exiting(p);
    top_free(&t);
    probe_close(p);
    return rc;
}
