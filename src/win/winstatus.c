/* winstatus: `vram status` on Windows, once or every N seconds. The same
 * options, text and JSON as on Linux (app/render_text.c, render_json.c),
 * less --proc-root: Windows has no /proc to point elsewhere. */
#include "win/winstatus.h"

#include <windows.h>

#include <getopt.h>
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

static int cmd_status(int argc, char **argv);

const struct cmd_entry winstatus_entry = {
    .name = "status",
    .args = "[--json] [--processes] [--energy] [--watch SECONDS [--count N]] [--color WHEN]",
    .summary = "where every byte of VRAM went, per GPU",
    .help = "  -j, --json            one JSON document (schema: docs/status-json.md); with\n"
            "                        --watch, one document per line\n"
            "  -p, --processes       list every process on each GPU\n"
            "  -e, --energy          read each GPU's energy counter too\n"
            "  -w, --watch SECONDS   print again every SECONDS (0.1 to 86400; 500ms, 2s, 1m)\n"
            "  -n, --count N         with --watch, stop after N reports\n"
            "      --color WHEN      colour: auto (on a console, unless NO_COLOR is set),\n"
            "                        always, never\n"
            "\n"
            "Parts: driver reserved (the driver's own), desktop / display (dwm.exe,\n"
            "explorer.exe, the shell and the browsers' graphics memory), workloads\n"
            "(compute processes), other, unattributed (used by no process you can see:\n"
            "other users, Windows itself), free. They add up to the total.\n"
            "Under WDDM the driver gives no per-process figures: they come from Windows'\n"
            "GPU counters (Dedicated GPU memory in Task Manager), or read n/a.\n",
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

static int cmd_status(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"processes", no_argument, NULL, 'p'},
        {"watch", required_argument, NULL, 'w'},
        {"count", required_argument, NULL, 'n'},
        {"energy", no_argument, NULL, 'e'},
        {"color", required_argument, NULL, 'C'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool json = false, verbose = false;
    unsigned what = PROBE_ALL;
    double watch = 0;
    long count = 0;
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
                return cmd_bad_usage(&winstatus_entry,
                                     "--watch '%s': give seconds from 0.1 to 86400, such as 2, "
                                     "0.5 or 500ms",
                                     optarg);
            break;
        case 'n': {
            char *end;
            count = strtol(optarg, &end, 10);
            if (*end || end == optarg || count < 1)
                return cmd_bad_usage(&winstatus_entry, "--count '%s': give a number >= 1", optarg);
            break;
        }
        case 'e':
            what |= PROBE_ENERGY;
            break;
        case 'C': {
            enum color_when w;
            if (color_parse(optarg, &w) < 0)
                return cmd_bad_usage(&winstatus_entry, "--color '%s': auto, always or never",
                                     optarg);
            color_choose(w);
            break;
        }
        case 'h':
            cmd_usage(&winstatus_entry, 0);
            return 0;
        default:
            return cmd_bad_usage(&winstatus_entry, NULL);
        }
    }
    if (optind < argc)
        return cmd_bad_usage(&winstatus_entry, "unexpected argument '%s'", argv[optind]);
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
