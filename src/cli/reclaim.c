/* reclaim: `vram reclaim`, gets back VRAM held by processes that will not
 * use it: defunct ones (a main thread gone, others stuck holding memory)
 * and stopped ones. Dry run unless --yes; then TERM, a grace period, KILL,
 * and a measurement of what really came back. Never the desktop, never
 * PID 1 or vram's own line, never another user's process unless root asks
 * with --all-users. */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cmd.h"
#include "core/acct.h"
#include "core/err.h"
#include "core/units.h"
#include "host/proc.h"
#include "probe/probe.h"

static int cmd_reclaim(int argc, char **argv);

const struct cmd_entry cmd_reclaim_entry = {
    .name = "reclaim",
    .args = "[--yes] [--user NAME] [--match PATTERN] [--all-users] [--grace SECONDS]",
    .summary = "get back VRAM held by defunct and stopped processes",
    .help = "  -y, --yes            act (without it: show what would be done, change nothing)\n"
            "  -u, --user NAME      only this user's processes\n"
            "  -m, --match PATTERN  only processes whose name or command matches (a glob,\n"
            "                       or a plain substring)\n"
            "  -a, --all-users      as root: other users' processes too\n"
            "  -g, --grace SECONDS  between TERM and KILL (default 5)\n"
            "\n"
            "Targets processes holding GPU memory that are defunct (their main thread has\n"
            "exited while others hold the memory) or stopped (SIGSTOP, Ctrl-Z). Never\n"
            "touches display processes, PID 1, vram itself or its parent.\n",
    .exec = cmd_reclaim,
};

struct target {
    uint32_t pid, ppid, uid;
    enum snap_pstate state;
    uint64_t bytes, start;
    char name[SNAP_NAME_MAX], user[SNAP_USER_MAX];
};

static bool matches(const char *pat, const struct snap_proc *p)
{
    if (strpbrk(pat, "*?["))
        return !fnmatch(pat, p->name, 0) || !fnmatch(pat, p->cmdline, 0);
    return strstr(p->name, pat) || strstr(p->cmdline, pat);
}

static size_t collect(const struct snap *s, const char *user, const char *pat, bool all,
                      struct target *t, size_t max, size_t *others)
{
    size_t n = 0;
    uid_t me = getuid();
    for (size_t g = 0; g < s->ngpus; g++)
        for (size_t i = 0; i < s->gpus[g].nprocs; i++) {
            const struct snap_proc *p = &s->gpus[g].procs[i];
            if (p->state != SNAP_PS_ZOMBIE && p->state != SNAP_PS_STOPPED)
                continue;
            if (!p->host_known || p->role == SNAP_ROLE_DISPLAY || p->pid <= 1 ||
                p->pid == (uint32_t)getpid() || p->pid == (uint32_t)getppid())
                continue;
            if ((user && strcmp(p->user, user)) || (pat && !matches(pat, p)))
                continue;
            if (p->uid != me && !(me == 0 && all)) {
                (*others)++;
                continue;
            }
            size_t k = 0;
            while (k < n && t[k].pid != p->pid)
                k++;
            if (k == n) {
                if (n == max)
                    continue;
                t[n] = (struct target){p->pid, p->ppid, p->uid, p->state, 0, p->start_time, "", ""};
                snprintf(t[n].name, sizeof t[n].name, "%s", p->name);
                snprintf(t[n].user, sizeof t[n].user, "%s", p->user);
                n++;
            }
            t[k].bytes += p->used_known ? p->used : 0;
        }
    return n;
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

/* Gone, or down to a defunct shell whose memory the driver took back. */
static bool released(const struct target *t)
{
    return hostproc_start_ticks(t->pid) == 0;
}

static void stop_one(const struct target *t, double grace)
{
    kill((pid_t)t->pid, SIGTERM);
    if (t->state == SNAP_PS_STOPPED)
        kill((pid_t)t->pid, SIGCONT); /* a stopped process only sees TERM once it runs */
    for (double w = 0; w < grace && !released(t); w += 0.1) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (!released(t))
        kill((pid_t)t->pid, SIGKILL);
    if (t->state == SNAP_PS_ZOMBIE && t->ppid > 1)
        kill((pid_t)t->ppid, SIGCHLD); /* its parent may now reap it */
}

static int cmd_reclaim(int argc, char **argv)
{
    static const struct option opts[] = {
        {"yes", no_argument, NULL, 'y'},
        {"user", required_argument, NULL, 'u'},
        {"match", required_argument, NULL, 'm'},
        {"all-users", no_argument, NULL, 'a'},
        {"grace", required_argument, NULL, 'g'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool yes = false, all = false;
    const char *user = NULL, *pat = NULL;
    double grace = 5;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "yu:m:ag:h", opts, NULL)) != -1) {
        switch (c) {
        case 'y':
            yes = true;
            break;
        case 'u':
            if (!getpwnam(optarg))
                return cmd_bad_usage(&cmd_reclaim_entry, "--user '%s': no such user", optarg);
            user = optarg;
            break;
        case 'm':
            pat = optarg;
            break;
        case 'a':
            all = true;
            break;
        case 'g':
            if (units_parse_seconds(optarg, &grace) < 0 || grace > 600)
                return cmd_bad_usage(&cmd_reclaim_entry, "--grace '%s': seconds from 0 to 600",
                                     optarg);
            break;
        case 'h':
            cmd_usage(&cmd_reclaim_entry, 0);
            return 0;
        default:
            return cmd_bad_usage(&cmd_reclaim_entry, NULL);
        }
    }
    if (optind < argc)
        return cmd_bad_usage(&cmd_reclaim_entry, "unexpected argument '%s'", argv[optind]);
    if (all && getuid() != 0)
        return cmd_bad_usage(&cmd_reclaim_entry, "--all-users needs root");
    char err[512];
    struct probe *p;
    int rc = probe_open(&p, "/proc", err, sizeof err);
    if (rc < 0)
        return cmd_no_driver(&cmd_reclaim_entry, err, rc);
    struct snap s;
    memset(&s, 0, sizeof s);
    probe_sample(p, &s, PROBE_ALL, clock_wall_ms());
    struct target t[256];
    size_t others = 0;
    size_t n = collect(&s, user, pat, all, t, 256, &others);
    char b[32];
    if (n == 0) {
        printf("nothing to reclaim%s%s%s\n", pat ? ": no defunct or stopped process matches '" : "",
               pat ? pat : "", pat ? "'" : "");
    }
    for (size_t i = 0; i < n; i++)
        printf("%s %u (%s, %s, %s): %s   %s\n", yes ? "stopping" : "would stop", t[i].pid,
               t[i].name, t[i].user, t[i].state == SNAP_PS_ZOMBIE ? "defunct" : "stopped",
               units_fmt_size(t[i].bytes, b, sizeof b),
               t[i].state == SNAP_PS_STOPPED ? "kill -TERM, kill -CONT, then -KILL"
                                             : "kill -TERM, then -KILL; parent told");
    if (others)
        printf("(%zu process%s of other users left alone: as root, --all-users)\n", others,
               others == 1 ? "" : "es");
    if (n && !yes)
        printf("dry run: nothing changed; add --yes to do it\n");
    if (n && yes) {
        uint64_t before = used_total(&s);
        for (size_t i = 0; i < n; i++)
            stop_one(&t[i], grace);
        probe_sample(p, &s, PROBE_PROCS, clock_wall_ms());
        uint64_t after = used_total(&s);
        char b1[32], b2[32];
        printf("freed %s (VRAM in use: %s before, %s now)\n",
               units_fmt_size(before > after ? before - after : 0, b, sizeof b),
               units_fmt_size(before, b1, sizeof b1), units_fmt_size(after, b2, sizeof b2));
    }
    snap_free(&s);
    probe_exiting(p);
    probe_close(p);
    return 0;
}
