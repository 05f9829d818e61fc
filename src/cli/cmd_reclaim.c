/* cmd_reclaim: `vram reclaim`, gets back VRAM held by processes that will not
 * use it: defunct ones (a main thread gone, others stuck holding memory),
 * stopped ones, and with --idle those that did no GPU work for that long. Dry run unless --yes;
 * then TERM, a grace period, KILL, and a measurement of what really came back. Never the desktop,
 * never PID 1 or vram's own line, never another user's process unless root asks with --all-users,
 * never a model of vram serve (cli/served.h): that is the daemon's to stop.
 */
#include <errno.h>
#include <fnmatch.h>
#include <jansson.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host/clock.h"
#include "app/render_json.h"
#include "cli/cmd.h"
#include "core/acct.h"
#include "core/doctor.h"
#include "core/err.h"
#include "core/units.h"
#include "host/pidref.h"
#include "host/proc.h"
#include "cli/idlewatch.h"
#include "cli/served.h"
#include "probe/probe.h"

struct policy {
    const char *user, *pat;
    bool all;
    double idle_s; /* 0: not asked */
    uint64_t now_ms;
    size_t served; /* models of vram serve that would have been targets */
};

struct reclaim_opts {
    struct policy pol;
    bool yes, json;
    double grace;
};

static int cmd_reclaim(const void *opts, int argc, char **argv);

/* --user: a user of this machine */
static int parse_user(const char *arg, void *field)
{
    if (!getpwnam(arg))
        return -1;
    *(const char **)field = arg;
    return 0;
}

static int parse_pattern(const char *arg, void *field)
{
    if (!*arg)
        return -1;
    *(const char **)field = arg;
    return 0;
}

#define O struct reclaim_opts
static const struct cmd_opt reclaim_opts[] = {
    {"yes", 'y', CMD_FLAG(O, yes), .help = "act (without it: show what would be done, change nothing)"},
    {"idle", 'i', CMD_SECONDS(O, pol.idle_s, 1, 86400), .arg = "DURATION",
     .fix = "a duration from 1s to 24h, like 30s or 10m",
     .help = "also processes that did no GPU work for this long (30s, 10m): vram watches the "
             "GPUs that long first"},
    {"user", 'u', CMD_CUSTOM(O, pol.user, parse_user), .arg = "NAME", .fix = "no such user",
     .help = "only this user's processes"},
    {"match", 'm', CMD_CUSTOM(O, pol.pat, parse_pattern), .arg = "PATTERN",
     .fix = "an empty pattern",
     .help = "only processes whose name or command matches (a glob, or a plain substring)"},
    {"all-users", 'a', CMD_FLAG(O, pol.all), .help = "as root: other users' processes too"},
    {"grace", 'g', CMD_SECONDS(O, grace, 0, 600), .arg = "SECONDS",
     .fix = "seconds from 0 to 600", .help = "between TERM and KILL (default 5)"},
    {"json", 'j', CMD_FLAG(O, json),
     .help = "what was found and done as JSON (schema: docs/json.md)"},
    {NULL},
};
#undef O

const struct cmd_entry cmd_reclaim_entry = {
    .name = "reclaim",
    .args = "[--yes] [--idle DURATION] [--user NAME] [--match PATTERN] [--all-users] "
            "[--grace SECONDS] [--json]",
    .summary = "get back VRAM held by defunct, stopped or idle processes",
    .opts = reclaim_opts,
    .help = "Targets processes holding GPU memory that are defunct (their main thread has\n"
            "exited while others hold the memory) or stopped (SIGSTOP, Ctrl-Z). Never\n"
            "touches display processes, PID 1, vram itself or its parent, nor the\n"
            "processes of a model of vram serve (vram unload NAME stops those).\n",
    .size = sizeof(struct reclaim_opts),
    .defaults = &(const struct reclaim_opts){.grace = 5},
    .exec = cmd_reclaim,
};

struct target {
    uint32_t pid, ppid, uid;
    enum snap_pstate state;
    bool idle;
    uint64_t bytes, start;
    char name[SNAP_NAME_MAX], user[SNAP_USER_MAX];
    char model[SNAP_NAME_MAX]; /* of vram serve: left to it (cli/served.h) */
    /* held from the check to the kill: a pid reused meanwhile (during the
     * grace period) is never signalled */
    struct pidref ref, parent;
};

static bool matches(const char *pat, const struct snap_proc *p)
{
    if (strpbrk(pat, "*?["))
        return !fnmatch(pat, p->name, 0) || !fnmatch(pat, p->cmdline, 0);
    return strstr(p->name, pat) || strstr(p->cmdline, pat);
}


static size_t collect(const struct snap *s, const struct policy *pol, struct target *t, size_t max,
                      size_t *others)
{
    size_t n = 0;
    uid_t me = getuid();
    for (size_t g = 0; g < s->ngpus; g++)
        for (size_t i = 0; i < s->gpus[g].nprocs; i++) {
            const struct snap_proc *p = &s->gpus[g].procs[i];
            bool idle = pol->idle_s > 0 && p->role != SNAP_ROLE_DISPLAY &&
                        doctor_idle(&s->gpus[g], p, pol->now_ms, pol->idle_s);
            if (p->state != SNAP_PS_ZOMBIE && p->state != SNAP_PS_STOPPED && !idle)
                continue;
            if (!p->host_known || p->role == SNAP_ROLE_DISPLAY || p->pid <= 1 ||
                p->pid == (uint32_t)getpid() || p->pid == (uint32_t)getppid())
                continue;
            if ((pol->user && strcmp(p->user, pol->user)) || (pol->pat && !matches(pol->pat, p)))
                continue;
            if (p->uid != me && !(me == 0 && pol->all)) {
                (*others)++;
                continue;
            }
            size_t k = 0;
            while (k < n && t[k].pid != p->pid)
                k++;
            if (k == n) {
                if (n == max)
                    continue;
                t[n] = (struct target){p->pid, p->ppid,       p->uid, p->state, idle,
                                       0,      p->start_time, "",     ""};
                if (pidref_hold(&t[n].ref, (int)p->pid) < 0)
                    continue; /* gone since the snapshot */
                pidref_hold(&t[n].parent, (int)p->ppid);
                snprintf(t[n].name, sizeof t[n].name, "%s", p->name);
                snprintf(t[n].user, sizeof t[n].user, "%s", p->user);
                snprintf(t[n].model, sizeof t[n].model, "%s", p->model);
                n++;
            }
            t[k].bytes += p->used_known ? p->used : 0;
        }
    return n;
}

/* Moves the models of vram serve out of t[] (kept: n in, targets out)
 * into served[]: the daemon stops them (vram unload), never reclaim.
 * How many there are. */
static size_t leave_served(struct target *t, size_t *n, struct target *served)
{
    size_t k = 0, m = 0;
    for (size_t i = 0; i < *n; i++) {
        if (t[i].model[0])
            served[m++] = t[i];
        else
            t[k++] = t[i];
    }
    *n = k;
    return m;
}

static void report_served(const struct target *s, size_t n)
{
    char b[32];
    for (size_t i = 0; i < n; i++)
        printf("left to vram serve: %u, model %s (%s, %s): %s   vram unload %s frees it\n",
               s[i].pid, s[i].model, s[i].user,
               s[i].state == SNAP_PS_ZOMBIE    ? "defunct"
               : s[i].state == SNAP_PS_STOPPED ? "stopped"
                                               : "idle",
               units_fmt_size(s[i].bytes, b, sizeof b), s[i].model);
}

static uint64_t used_total(const struct snap *s)
{
    uint64_t u = 0;
    for (size_t g = 0; g < s->ngpus; g++) {
        struct acct a;
        acct_gpu(&s->gpus[g], &a);
        u += acct_used(&a);
    }
    return u;
}

static void stop_one(const struct target *t, double grace)
{
    pidref_end(&t->ref, t->state == SNAP_PS_STOPPED, grace);
    if (t->state == SNAP_PS_ZOMBIE && t->ppid > 1)
        pidref_kill(&t->parent, SIGCHLD); /* its parent may now reap it */
}

static const char *why(const struct target *t)
{
    return t->state == SNAP_PS_ZOMBIE    ? "defunct"
           : t->state == SNAP_PS_STOPPED ? "stopped"
                                         : "idle";
}

static void report(const struct target *t, size_t n, const struct policy *pol, size_t others,
                   bool yes)
{
    char b[32];
    if (n == 0) {
        const char *kinds = pol->idle_s > 0 ? "defunct, stopped or idle" : "defunct or stopped";
        if (pol->pat || pol->user)
            printf("nothing to reclaim: no %s process%s%s%s%s%s\n", kinds,
                   pol->pat ? " matches '" : "", pol->pat ? pol->pat : "", pol->pat ? "'" : "",
                   pol->user ? " of user " : "", pol->user ? pol->user : "");
        else
            printf("nothing to reclaim: no %s process holds GPU memory%s\n", kinds,
                   pol->served ? " but models of vram serve" : "");
    }
    for (size_t i = 0; i < n; i++)
        printf("%s %u (%s, %s, %s): %s   %s\n", yes ? "stopping" : "would stop", t[i].pid,
               t[i].name, t[i].user, why(&t[i]), units_fmt_size(t[i].bytes, b, sizeof b),
               t[i].state == SNAP_PS_STOPPED  ? "kill -TERM, kill -CONT, then -KILL"
               : t[i].state == SNAP_PS_ZOMBIE ? "kill -TERM, then -KILL; parent told"
                                              : "kill -TERM, then -KILL");
    if (others)
        printf("(%zu process%s of other users left alone: as root, --all-users)\n", others,
               others == 1 ? "" : "es");
    if (n && !yes)
        printf("dry run: nothing changed; add --yes to do it\n");
}

/* docs/json.md: bumped on any incompatible change of --json */
#define RECLAIM_JSON_SCHEMA 1

static void report_json(const struct target *t, size_t n, const struct target *s, size_t ns,
                        size_t others, bool yes, uint64_t before, uint64_t after)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, json_pack("{s:I, s:s, s:s, s:I, s:s, s:I, s:s}", "pid",
                                             (json_int_t)t[i].pid, "name", t[i].name, "user",
                                             t[i].user, "uid", (json_int_t)t[i].uid, "reason",
                                             why(&t[i]), "bytes", (json_int_t)t[i].bytes, "action",
                                             yes ? "stopped" : "would_stop"));
    bool acted = yes && n;
    json_t *doc = json_pack(
        "{s:i, s:b, s:o, s:I, s:o, s:o}", "schema", RECLAIM_JSON_SCHEMA, "dry_run", !yes, "targets",
        arr, "others_skipped", (json_int_t)others, "used_before",
        acted ? json_integer((json_int_t)before) : json_null(), "used_after",
        acted ? json_integer((json_int_t)after) : json_null());
    json_object_set_new(doc, "freed",
                        acted ? json_integer((json_int_t)(before > after ? before - after : 0))
                              : json_null());
    json_t *left = json_array();
    for (size_t i = 0; i < ns; i++) {
        char fix[SNAP_NAME_MAX + 16];
        snprintf(fix, sizeof fix, "vram unload %s", s[i].model);
        json_array_append_new(left, json_pack("{s:I, s:s, s:s, s:I, s:s}", "pid",
                                              (json_int_t)s[i].pid, "model", s[i].model, "reason",
                                              why(&s[i]), "bytes", (json_int_t)s[i].bytes, "fix",
                                              fix));
    }
    json_object_set_new(doc, "served", left);
    json_dumpf(doc, stdout, JSON_INDENT(2) | RENDER_JSON_REALS | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
    json_decref(doc);
}

static int cmd_reclaim(const void *opts, int argc, char **argv)
{
    (void)argc, (void)argv;
    const struct reclaim_opts *o = opts;
    bool yes = o->yes, json = o->json;
    struct policy pol = o->pol;
    double grace = o->grace;
    if (pol.all && getuid() != 0)
        return cmd_bad_usage(&cmd_reclaim_entry, "--all-users needs root");
    char err[512];
    struct probe *p;
    int rc = probe_open_ahead(&p, "/proc", PROBE_HOLDERS, err, sizeof err);
    if (rc < 0)
        return cmd_no_driver(&cmd_reclaim_entry, err, rc);
    struct snap s;
    memset(&s, 0, sizeof s);
    if (pol.idle_s > 0) {
        if (idlewatch_run(p, &s, pol.idle_s, err, sizeof err) < 0) {
            fprintf(stderr, "vram reclaim: --idle: %s\n", err);
            snap_free(&s);
            probe_close(p);
            return 1;
        }
    } else {
        probe_sample(p, &s, PROBE_ALL, clock_wall_ms());
    }
    pol.now_ms = clock_wall_ms();
    served_mark(&s);
    struct target t[256], served[256];
    size_t others = 0;
    size_t n = collect(&s, &pol, t, 256, &others);
    size_t nserved = pol.served = leave_served(t, &n, served);
    if (!json) {
        report(t, n, &pol, others, yes);
        report_served(served, nserved);
    }
    uint64_t before = used_total(&s), after = before;
    if (n && yes) {
        char b[32], b1[32], b2[32];
        for (size_t i = 0; i < n; i++)
            stop_one(&t[i], grace);
        probe_sample(p, &s, PROBE_PROCS, clock_wall_ms());
        after = used_total(&s);
        if (!json)
            printf("freed %s (VRAM in use: %s before, %s now)\n",
                   units_fmt_size(before > after ? before - after : 0, b, sizeof b),
                   units_fmt_size(before, b1, sizeof b1), units_fmt_size(after, b2, sizeof b2));
    }
    if (json)
        report_json(t, n, served, nserved, others, yes, before, after);
    for (size_t i = 0; i < n; i++) {
        pidref_close(&t[i].ref);
        pidref_close(&t[i].parent);
    }
    for (size_t i = 0; i < nserved; i++) {
        pidref_close(&served[i].ref);
        pidref_close(&served[i].parent);
    }
    snap_free(&s);
    probe_exiting(p);
    probe_close(p);
    return 0;
}
