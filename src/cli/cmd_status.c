/* cmd_status: `vram status`, where every byte of VRAM went, once or every N
 * seconds; text for people, JSON (one document per line) for scripts. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host/clock.h"
#include "cli/cmd.h"
#include "cli/color.h"
#include "cli/served.h"
#include "core/err.h"
#include "core/units.h"
#include "probe/probe.h"
#include "app/render_json.h"
#include "app/render_text.h"

static int cmd_status(int argc, char **argv);

const struct cmd_entry cmd_status_entry = {
    .name = "status",
    .args = "[--json] [--processes] [--energy] [--watch SECONDS [--count N]] [--proc-root DIR] "
            "[--color WHEN]",
    .summary = "where every byte of VRAM went, per GPU",
    .help = "  -j, --json            one JSON document (schema: docs/status-json.md); with\n"
            "                        --watch, one document per line\n"
            "  -p, --processes       list every process on each GPU\n"
            "  -e, --energy          read each GPU's energy counter too (3 ms a GPU)\n"
            "  -w, --watch SECONDS   print again every SECONDS (0.1 to 86400; 500ms, 2s, 1m)\n"
            "  -n, --count N         with --watch, stop after N reports\n"
            "      --proc-root DIR   read processes from DIR instead of /proc (a container\n"
            "                        with the host's /proc mounted, or a test fixture)\n"
            "      --color WHEN      colour: auto (on a terminal, unless NO_COLOR is set),\n"
            "                        always, never\n"
            "\n"
            "Parts: driver reserved (the driver's own), desktop / display (X, Wayland\n"
            "compositors and graphics clients), workloads (compute processes), other,\n"
            "unattributed (used by no process you can see: other users, containers,\n"
            "leaks), free. They add up to the total.\n",
    .exec = cmd_status,
};

static int report(struct probe *p, struct snap *s, unsigned what, bool json, unsigned flags,
                  bool host)
{
    int rc = probe_sample(p, s, what, clock_wall_ms());
    if (rc < 0) {
        fprintf(stderr, "vram status: could not read the GPUs\n");
        return rc;
    }
    if (host) /* this machine's processes (not a --proc-root's): vram serve's models named */
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

static int cmd_status(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"processes", no_argument, NULL, 'p'},
        {"watch", required_argument, NULL, 'w'},
        {"count", required_argument, NULL, 'n'},
        {"proc-root", required_argument, NULL, 'R'},
        {"energy", no_argument, NULL, 'e'},
        {"color", required_argument, NULL, 'C'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool json = false, verbose = false;
    unsigned what = PROBE_ALL;
    double watch = 0;
    long count = 0;
    const char *procroot = "/proc";
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "jpew:n:h", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = true;
            break;
        case 'p':
            verbose = true;
            break;
        case 'w':
            if (units_parse_seconds(optarg, &watch) < 0 || watch < 0.1 || watch > 86400)
                return cmd_bad_usage(&cmd_status_entry,
                                     "--watch '%s': give seconds from 0.1 to 86400, such as 2, "
                                     "0.5 or 500ms",
                                     optarg);
            break;
        case 'n': {
            char *end;
            count = strtol(optarg, &end, 10);
            if (*end || end == optarg || count < 1)
                return cmd_bad_usage(&cmd_status_entry, "--count '%s': give a number >= 1", optarg);
            break;
        }
        case 'R':
            procroot = optarg;
            break;
        case 'e':
            what |= PROBE_ENERGY;
            break;
        case 'C': {
            enum color_when w;
            if (color_parse(optarg, &w) < 0)
                return cmd_bad_usage(&cmd_status_entry, "--color '%s': auto, always or never",
                                     optarg);
            color_choose(w);
            break;
        }
        case 'h':
            cmd_usage(&cmd_status_entry, 0);
            return 0;
        default:
            return cmd_bad_usage(&cmd_status_entry, NULL);
        }
    }
    if (optind < argc)
        return cmd_bad_usage(&cmd_status_entry, "unexpected argument '%s'", argv[optind]);
    if (count && !watch)
        return cmd_bad_usage(&cmd_status_entry, "--count needs --watch");

    char err[512];
    struct probe *p;
    int rc = probe_open(&p, procroot, err, sizeof err);
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
        struct timespec ts = {(time_t)watch, (long)((watch - (double)(time_t)watch) * 1e9)};
        nanosleep(&ts, NULL);
    }
    snap_free(&s);
    probe_exiting(p);
    probe_close(p);
    return err_exit_code(rc);
}
