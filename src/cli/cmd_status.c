/* cmd_status: `vram status`, where every byte of VRAM went, once or every N
 * seconds; text for people, JSON (one document per line) for scripts. The
 * same body on Linux and Windows (vram.exe): what differs is below it, in
 * the probe (probe/probe.h) and cli/cmdos.h's options and help. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host/clock.h"
#include "cli/cmd.h"
#include "cli/cmdos.h"
#include "cli/color.h"
#include "cli/served.h"
#include "core/err.h"
#include "core/units.h"
#include "probe/probe.h"
#include "app/render_json.h"
#include "app/render_text.h"

struct status_opts {
    bool json, processes, energy, all;
    double watch; /* 0: once */
    long count;   /* 0: for ever */
    const char *procroot;
};

static int cmd_status(const void *opts, int argc, char **argv);

#define O struct status_opts
static const struct cmd_opt status_opts[] = {
    {"json", 'j', CMD_FLAG(O, json),
     .help = "one JSON document (schema: docs/status-json.md); with --watch, one document per "
             "line"},
    {"processes", 'p', CMD_FLAG(O, processes), .help = CMDOS_STATUS_PROCESSES_HELP},
    {"all", 'a', CMD_FLAG(O, all),
     .help = "each GPU's gauges and settings too: utilization, power and its limit, temperature, "
             "modes, PCIe link, fan, clocks (milliseconds more: the driver readies them)"},
    {"energy", 'e', CMD_FLAG(O, energy), .help = "read each GPU's energy counter too (3 ms a GPU)"},
    {"watch", 'w', CMD_SECONDS(O, watch, 0.1, 86400), .arg = "SECONDS",
     .fix = "give seconds from 0.1 to 86400, such as 2, 0.5 or 500ms",
     .help = "print again every SECONDS (0.1 to 86400; 500ms, 2s, 1m)"},
    {"count", 'n', CMD_NUMBER(O, count, 1, 1e9), .arg = "N",
     .help = "with --watch, stop after N reports"},
    CMDOS_PROCROOT_OPT(O, procroot,
                       "read processes from DIR instead of /proc (a container with the host's "
                       "/proc mounted, or a test fixture)")
    CMD_COLOR_OPT,
    {NULL},
};
#undef O

const struct cmd_entry cmd_status_entry = {
    .name = "status",
    .args = "[--json] [--all] [--processes] [--energy] [--watch SECONDS [--count N]]"
            CMDOS_PROCROOT_ARG " [--color WHEN]",
    .summary = "where every byte of VRAM went, per GPU",
    .opts = status_opts,
    .help = CMDOS_STATUS_HELP
    "\n"
    "It asks the driver what nvidia-smi's memory query asks, and the processes;\n"
    "--all adds each GPU's utilization, power, temperature, modes, PCIe link,\n"
    "fan and clocks (in the JSON, null without it), which the driver readies\n"
    "for each process that asks: milliseconds more. vram top shows them live.\n",
    .size = sizeof(struct status_opts),
    .defaults = &(const struct status_opts){.procroot = "/proc"},
    .exec = cmd_status,
    .quick_end = true,
};

static int report(struct probe *p, struct snap *s, unsigned what, bool json, unsigned flags,
                  bool host)
{
    int rc = probe_sample(p, s, what, clock_wall_ms());
    if (rc < 0) {
        fprintf(stderr, "vram status: could not read the GPUs\n");
        return rc;
    }
    /* this machine's processes (not a --proc-root's): vram serve's models
     * named (none on Windows, which has no vram serve) */
    if (host)
        served_mark(s);
    if (json) {
        json_t *doc = render_json(s);
        if (!doc || json_dumpf(doc, stdout, JSON_COMPACT | RENDER_JSON_REALS) < 0) {
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
    double watch = o->watch;
    long count = o->count;
    const char *procroot = o->procroot;
    bool json = o->json, verbose = o->processes;
    /* the memory view asks what nvidia-smi's memory query asks, and the
     * processes: each gauge and setting costs a millisecond or more of
     * the driver's on a process's first asking (utilization 2.6 ms, power
     * 1 ms, its limit 3 ms on an H100: bench/RESULTS.md, issue 46), so
     * only --all asks them. The CUDA version is the JSON's only (text
     * loads no libcuda); the scan of every process's descriptors (holders
     * of the device with no memory) only for the whole list of processes */
    unsigned what = PROBE_PROCS | (o->all ? PROBE_SLOW : PROBE_LEAN) |
                    (o->energy ? PROBE_ENERGY : 0) | (json ? PROBE_CUDA : 0) |
                    (verbose ? PROBE_HOLDERS : 0);
    if (count && !watch)
        return cmd_bad_usage(&cmd_status_entry, "--count needs --watch");

    char err[512];
    struct probe *p;
    int rc = probe_open_ahead(&p, procroot, what, err, sizeof err);
    if (rc < 0)
        return cmd_no_driver(&cmd_status_entry, err, rc);
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
                    (verbose ? RENDER_PROCS : 0) | (color_on(stdout) ? RENDER_COLOR : 0),
                    !strcmp(procroot, "/proc"));
        if (rc < 0 || !watch || (count && i + 1 >= count))
            break;
        clock_sleep(watch);
    }
    snap_free(&s);
    probe_ending(p); /* the process ends with the command (quick_end) */
    probe_close(p);
    return err_exit_code(rc);
}
