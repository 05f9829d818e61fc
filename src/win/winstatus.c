/* winstatus: `vram status` on Windows, once or every N seconds. The same
 * options, text and JSON as on Linux (app/render_text.c, render_json.c),
 * less --proc-root: Windows has no /proc to point elsewhere. */
#include "win/winstatus.h"

#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host/clock.h"
#include "app/render_json.h"
#include "app/render_text.h"
#include "cli/color.h"
#include "core/err.h"
#include "core/units.h"
#include "probe/probe.h"

struct status_opts {
    bool json, processes, energy;
    double watch;
    long count;
};

static int cmd_status(const void *opts, int argc, char **argv);

#define O struct status_opts
static const struct cmd_opt status_opts[] = {
    {"json", 'j', CMD_FLAG(O, json),
     .help = "one JSON document (schema: docs/status-json.md); with --watch, one document per "
             "line"},
    {"processes", 'p', CMD_FLAG(O, processes), .help = "list every process on each GPU"},
    {"energy", 'e', CMD_FLAG(O, energy), .help = "read each GPU's energy counter too"},
    {"watch", 'w', CMD_SECONDS(O, watch, 0.1, 86400), .arg = "SECONDS",
     .fix = "give seconds from 0.1 to 86400, such as 2, 0.5 or 500ms",
     .help = "print again every SECONDS (0.1 to 86400; 500ms, 2s, 1m)"},
    {"count", 'n', CMD_NUMBER(O, count, 1, 1e9), .arg = "N",
     .help = "with --watch, stop after N reports"},
    {"color", 0, CMD_COLOR,
     .help = "colour: auto (on a console, unless NO_COLOR is set), always, never"},
    {NULL},
};
#undef O

const struct cmd_entry winstatus_entry = {
    .name = "status",
    .args = "[--json] [--processes] [--energy] [--watch SECONDS [--count N]] [--color WHEN]",
    .summary = "where every byte of VRAM went, per GPU",
    .opts = status_opts,
    .help = "Parts: driver reserved (the driver's own), desktop / display (dwm.exe,\n"
            "explorer.exe, the shell and the browsers' graphics memory), workloads\n"
            "(compute processes), other, unattributed (used by no process you can see:\n"
            "other users, Windows itself), free. They add up to the total.\n"
            "Under WDDM the driver gives no per-process figures: they come from Windows'\n"
            "GPU counters (Dedicated GPU memory in Task Manager), or read n/a.\n",
    .size = sizeof(struct status_opts),
    .exec = cmd_status,
};

static int report(struct probe *p, struct snap *s, unsigned what, bool json, unsigned flags)
{
    int rc = probe_sample(p, s, what, clock_wall_ms());
    if (rc < 0) {
        fprintf(stderr, "vram status: could not read the GPUs\n");
        return rc;
    }
    if (json) {
        json_t *doc = render_json(s);
        if (!doc || json_dumpf(doc, stdout, JSON_COMPACT) < 0) {
            json_decref(doc);
            return VRAM_EFAIL;
        }
        json_decref(doc);
        fputc('\n', stdout);
    } else {
        render_text(stdout, s, flags);
    }
    fflush(stdout);
    return VRAM_OK;
}

static int cmd_status(const void *opts, int argc, char **argv)
{
    (void)argc, (void)argv;
    const struct status_opts *o = opts;
    bool json = o->json, verbose = o->processes;
    unsigned what = PROBE_ALL | (o->energy ? PROBE_ENERGY : 0) | (json ? PROBE_CUDA : 0);
    double watch = o->watch;
    long count = o->count;
    if (count && !watch)
        return cmd_bad_usage(&winstatus_entry, "--count needs --watch");

    char err[512];
    struct probe *p;
    int rc = probe_open(&p, NULL, err, sizeof err);
    if (rc < 0)
        return cmd_no_driver(&winstatus_entry, err, rc);
    struct snap s;
    memset(&s, 0, sizeof s);
    for (long i = 0;; i++) {
        if (watch && !json && i) {
            time_t now = time(NULL);
            char ts[64];
            strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", localtime(&now));
            printf("\n-- %s --\n", ts);
        }
        rc = report(p, &s, what, json,
                    (verbose ? RENDER_PROCS : 0) | (color_on(stdout) ? RENDER_COLOR : 0));
        if (rc < 0 || !watch || (count && i + 1 >= count))
            break;
        Sleep((DWORD)(watch * 1000));
    }
    snap_free(&s);
    probe_exiting(p);
    probe_close(p);
    return err_exit_code(rc);
}
