/* cmd_top: `vram top`, the live view. The loop samples the cheap figures
 * every interval and the costly ones (process lists, /proc scan, fan) less
 * often (top_view.c), keeps a history of each GPU's figures, answers keys
 * (top_keys.c) and the children top runs to suspend, resume or stop,
 * waiting on the keyboard and their pipes at once. --once prints one
 * frame, or with --json the same as JSON. The same body on Linux and
 * Windows (vram.exe): the screen, the keys and what top may do to a
 * process are top/top_os.h's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/render_json.h"
#include "cli/cmd.h"
#include "cli/cmdos.h"
#include "top/top_draw.h"
#include "top/top_json.h"
#include "top/top_keys.h"
#include "top/top_os.h"
#include "top/top_rows.h"
#include "top/top_view.h"
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
    CMDOS_PROCROOT_OPT(O, procroot,
                       "read processes from DIR instead of /proc (then top signals, suspends "
                       "and stops nothing)")
    CMD_COLOR_OPT,
    {NULL},
};
#undef O

const struct cmd_entry cmd_top_entry = {
    .name = "top",
    .args = "[--interval SECONDS] [--once [--json]] [--sort COLUMN] [--reverse] [--tree] "
            "[--filter TEXT]" CMDOS_PROCROOT_ARG " [--color WHEN]",
    .summary = "live view of VRAM per GPU and per process",
    .opts = top_opts,
    .help = CMDOS_TOP_HELP,
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
        top_os_away(t);
    top_view_took(t, what);
    return VRAM_OK;
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
            top_os_show();
        }
        bool redraw = top_os_wait(t, next > now ? next - now : 0);
        int ch;
        while ((ch = top_os_key(t)) != -1) {
            if (!top_key(t, ch))
                return;
            redraw = true;
        }
        if (redraw) {
            top_draw(t);
            top_os_show();
        }
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
    clock_sleep(t->interval);
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
    return top_os_frame(t, stdout);
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
    t.ops = top_os_ops(p, host);
    if ((rc = top_view_start(&t, &o->view, "top")) != 0) {
        probe_close(p);
        return rc;
    }
    if (!once_only && !top_os_can_show()) {
        probe_exiting(p);
        probe_close(p);
        return 2;
    }
    top_os_start(&t);
    if (once_only) {
        rc = once(&t, p, host, o->view.json);
    } else if ((rc = top_os_open(&t)) == 0) {
        top_loop(&t, p, host);
        top_os_close();
    } else {
        rc = 1;
    }
    top_os_end();
    probe_exiting(p);
    top_free(&t);
    probe_close(p);
    return rc;
}
