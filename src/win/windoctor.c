/* windoctor: `vram doctor` on Windows, one report of what wastes this
 * machine's VRAM, each finding with its cost and a fix that exists on
 * Windows. The facts only Windows has: the display adapters (SetupAPI),
 * HwSchMode and whether `vram headless on` was applied (the registry).
 * Changes nothing. */
#include "win/windoctor.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "app/render_json.h"
#include "host/clock.h"
#include "cli/color.h"
#include "cli/idlewatch.h"
#include "core/doctor_win.h"
#include "core/err.h"
#include "core/headless.h"
#include "core/units.h"
#include "probe/probe.h"
#include "win/winheadless.h"
#include "win/winprobe.h"
#include "win/winstate.h"

struct doctor_opts {
    bool json;
    double idle;
};

static int cmd_doctor(const void *opts, int argc, char **argv);

#define O struct doctor_opts
static const struct cmd_opt doctor_opts[] = {
    {"json", 'j', CMD_FLAG(O, json), .help = "the findings as JSON (schema: docs/json.md)"},
    {"idle", 'i', CMD_SECONDS(O, idle, 1, 86400), .arg = "DURATION",
     .fix = "a duration from 1s to 24h, like 30s or 10m",
     .help = "also watch the GPUs this long (30s, 10m) and report processes that hold memory "
             "but did no GPU work (needs the driver's per-process samples, which WDDM may lack)"},
    {"color", 0, CMD_COLOR,
     .help = "colour: auto (on a console, unless NO_COLOR is set), always, never"},
    {NULL},
};
#undef O

const struct cmd_entry windoctor_entry = {
    .name = "doctor",
    .args = "[--json] [--idle DURATION] [--color WHEN]",
    .summary = "what wastes this machine's VRAM, and how to get it back",
    .opts = doctor_opts,
    .help = "Looks for: VRAM held by the desktop on the NVIDIA card (dwm.exe, explorer.exe,\n"
            "the shell, browsers) and what vram headless on gives back, hardware-\n"
            "accelerated GPU scheduling, compute processes holding memory while the GPU\n"
            "does nothing (a finished training's python.exe), memory no process you can\n"
            "see holds, the driver's reserve, high power at idle, compute mode.\n"
            "Changes nothing: vram headless and taskkill act on what it finds.\n"
            "\n"
            "Exit status: 0 when nothing needs doing, 1 when something does (a warning),\n"
            "2 for bad usage, 3 without a GPU driver.\n",
    .size = sizeof(struct doctor_opts),
    .exec = cmd_doctor,
};

static void windows_facts(struct doc_win *w)
{
    memset(w, 0, sizeof *w);
    struct hw_state hs;
    winheadless_scan(&hs);
    w->hwsch = hs.hwsch;
    w->hwsch_known = true;
    w->headless_on = winstate_applied(&winstate_machine);
    for (size_t i = 0; i < hs.nadapters && !w->igpu; i++) {
        unsigned v = hs.adapters[i].vendor;
        if (v && v != HL_VENDOR_NVIDIA) { /* VEN_0000: a virtual adapter, not a GPU */
            w->igpu = true;
            snprintf(w->igpu_name, sizeof w->igpu_name, "the %s adapter",
                     headless_vendor_name(v));
        }
    }
}

static int cmd_doctor(const void *opts, int argc, char **argv)
{
    (void)argc, (void)argv;
    const struct doctor_opts *o = opts;
    bool json = o->json;
    double idle = o->idle;
    char err[512];
    struct probe *p;
    int rc = probe_open(&p, NULL, err, sizeof err);
    if (rc < 0)
        return cmd_no_driver(&windoctor_entry, err, rc);
    struct snap s;
    memset(&s, 0, sizeof s);
    if (idle > 0) {
        if (idlewatch_run(p, &s, idle, err, sizeof err) < 0) {
            fprintf(stderr, "vram doctor: --idle: %s\n", err);
            snap_free(&s);
            probe_close(p);
            return 1;
        }
    } else {
        probe_sample(p, &s, PROBE_ALL, clock_wall_ms());
    }
    struct doc_host host;
    memset(&host, 0, sizeof host);
    host.idle_s = idle;
    host.now_ms = clock_wall_ms();
    struct doc_win win;
    windows_facts(&win);
    struct doc_finding f[128];
    size_t n = doctor_win_examine(&s, &host, &win, f, 128);
    int warnings = 0;
    for (size_t i = 0; i < n; i++)
        warnings += f[i].level == DOC_WARN;
    if (json) {
        json_t *doc = render_json_findings(f, n, warnings);
        json_dumpf(doc, stdout, JSON_INDENT(2) | RENDER_JSON_REALS);
        fputc('\n', stdout);
        json_decref(doc);
    } else {
        bool col = color_on(stdout);
        const char *warn = col ? "\033[1;33m!\033[0m" : "!", *dim = col ? "\033[2m" : "",
                   *off = col ? "\033[0m" : "";
        for (size_t i = 0; i < n; i++) {
            const char *mark = f[i].level == DOC_WARN ? warn : "-";
            if (f[i].gpu >= 0)
                printf("%s GPU %d: %s\n", mark, f[i].gpu, f[i].what);
            else
                printf("%s %s\n", mark, f[i].what);
            printf("      %sfix:%s %s\n", dim, off, f[i].fix);
        }
        const char *why = winprobe_counters_why(p);
        if (why[0])
            printf("  note: per-process figures: %s\n", why);
        printf(warnings ? "%d thing%s to do\n" : "nothing to do\n", warnings,
               warnings == 1 ? "" : "s");
    }
    snap_free(&s);
    probe_exiting(p);
    probe_close(p);
    return warnings ? 1 : 0;
}
