/* cmd_doctor: `vram doctor`, one report of what wastes this machine's VRAM,
 * each finding with its cost and its fix. Changes nothing. The same body on
 * Linux and Windows (vram.exe): the OS's own facts and fixes are
 * cli/doctor_os.h's. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "host/clock.h"
#include "app/render_json.h"
#include "cli/cmd.h"
#include "cli/cmdos.h"
#include "cli/color.h"
#include "cli/doctor_os.h"
#include "core/doctor.h"
#include "core/err.h"
#include "core/units.h"
#include "cli/idlewatch.h"
#include "cli/served.h"
#include "probe/probe.h"

struct doctor_opts {
    bool json;
    double idle; /* 0: not asked */
    const char *procroot, *sysroot;
};

static int cmd_doctor(const void *opts, int argc, char **argv);

#define O struct doctor_opts
static const struct cmd_opt doctor_opts[] = {
    {"json", 'j', CMD_FLAG(O, json), .help = "the findings as JSON (schema: docs/json.md)"},
    {"idle", 'i', CMD_SECONDS(O, idle, 1, 86400), .arg = "DURATION",
     .fix = "a duration from 1s to 24h, like 30s or 10m",
     .help = "also watch the GPUs this long (30s, 10m) and report processes that hold memory "
             "but did no GPU work" CMDOS_DOCTOR_IDLE_HELP},
    CMDOS_PROCROOT_OPT(O, procroot, "read processes from DIR instead of /proc")
    CMDOS_SYSROOT_OPT(O, sysroot)
    CMD_COLOR_OPT,
    {NULL},
};
#undef O

const struct cmd_entry cmd_doctor_entry = {
    .name = "doctor",
    .args = "[--json] [--idle DURATION]" CMDOS_PROCROOT_ARG CMDOS_SYSROOT_ARG " [--color WHEN]",
    .summary = "what wastes this machine's VRAM, and how to get it back",
    .opts = doctor_opts,
    .help = CMDOS_DOCTOR_HELP "\n"
            "Exit status: 0 when nothing needs doing, 1 when something does (a warning),\n"
            "2 for bad usage, 3 without a GPU driver.\n",
    .size = sizeof(struct doctor_opts),
    .defaults = &(const struct doctor_opts){.procroot = "/proc", .sysroot = "/sys"},
    .exec = cmd_doctor,
};

static void say_json(const struct doc_finding *f, size_t n, int warnings)
{
    json_t *doc = render_json_findings(f, n, warnings);
    json_dumpf(doc, stdout, JSON_INDENT(2) | RENDER_JSON_REALS);
    fputc('\n', stdout);
    json_decref(doc);
}

static void say_text(struct probe *p, const struct doc_finding *f, size_t n, int warnings)
{
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
    doctor_os_notes(p, stdout);
    printf(warnings ? "%d thing%s to do\n" : "nothing to do\n", warnings, warnings == 1 ? "" : "s");
}

/* One snapshot, or a watch of --idle's length. 0, or 1 said. */
static int look(struct probe *p, struct snap *s, double idle)
{
    char err[512];
    if (idle > 0 && idlewatch_run(p, s, idle, err, sizeof err) < 0) {
        fprintf(stderr, "vram doctor: --idle: %s\n", err);
        return 1;
    }
    if (idle <= 0)
        probe_sample(p, s, PROBE_ALL, clock_wall_ms());
    return 0;
}

static int cmd_doctor(const void *opts, int argc, char **argv)
{
    (void)argc, (void)argv;
    const struct doctor_opts *o = opts;
    char err[512];
    struct probe *p;
    int rc = probe_open_ahead(&p, o->procroot, PROBE_HOLDERS, err, sizeof err);
    if (rc < 0)
        return cmd_no_driver(&cmd_doctor_entry, err, rc);
    struct snap s;
    memset(&s, 0, sizeof s);
    if (look(p, &s, o->idle)) {
        snap_free(&s);
        probe_close(p);
        return 1;
    }
    /* vram serve's models, the daemon's to stop (none on Windows) */
    if (!strcmp(o->procroot, "/proc"))
        served_mark(&s);
    struct doc_host host;
    memset(&host, 0, sizeof host);
    host.idle_s = o->idle;
    host.now_ms = clock_wall_ms();
    struct doc_finding f[128];
    size_t n = doctor_os_examine(&s, &host, o->procroot, o->sysroot, f, 128);
    int warnings = 0;
    for (size_t i = 0; i < n; i++)
        warnings += f[i].level == DOC_WARN;
    if (o->json)
        say_json(f, n, warnings);
    else
        say_text(p, f, n, warnings);
    snap_free(&s);
    probe_exiting(p);
    probe_close(p);
    return warnings ? 1 : 0;
}
