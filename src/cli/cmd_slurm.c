/* cmd_slurm: `vram slurm`, vram under Slurm (docs/slurm.md). `gres` prints
 * this node's GPU memory as the lines slurm.conf and gres.conf need for
 * the count GRES "vram"; `step` and `epilog` are what the SPANK plugin
 * (src/slurm/) runs: a step's slice, made and held as `vram run` makes
 * one, and the check at a job's end that none of its processes still
 * holds GPU memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/clock.h"
#include "cli/cmd.h"
#include "cli/slurmepilog.h"
#include "cli/slurmstep.h"
#include "core/acct.h"
#include "core/err.h"
#include "core/units.h"
#include "probe/probe.h"

struct slurm_opts {
    const char *node;
    uint64_t vram;
    const char *gpu;
    bool swap;
    double wait;
    long long job, uid; /* -1: not given */
    double grace;       /* -1: not given (5 s) */
};

static int cmd_slurm(const void *opts, int argc, char **argv);

#define O struct slurm_opts
static const struct cmd_opt slurm_opts[] = {
    {"node", 'n', CMD_STRING(O, node), .arg = "NAME",
     .help = "gres: the node's name in slurm.conf (default: this machine's short host name)"},
    {"vram", 'm', CMD_SIZE(O, vram, 1 << 20), .arg = "SIZE",
     .fix = "give a size of at least 1M, such as 6G or 512M",
     .help = "step: the step's slice on each of its GPUs (\"6G\")"},
    {"gpu", 'g', CMD_STRING(O, gpu), .arg = "N|UUID",
     .help = "step: the GPU, when Slurm named none (a --gres=vram:gpuN:SIZE)"},
    {"swap", 's', CMD_FLAG(O, swap), .help = "step: fast swap, as vram run --swap"},
    {"wait", 'w', CMD_SECONDS(O, wait, 0.001, 1e9), .arg = "T",
     .fix = "give a duration such as 90s or 10m",
     .help = "step: when no GPU has room, wait up to T for one (default: refuse at once)"},
    {"job", 'j', CMD_NUMBER(O, job, 1, 4294967294.0), .arg = "ID", .help = "epilog: the job"},
    {"uid", 'u', CMD_NUMBER(O, uid, 0, 4294967294.0), .arg = "UID",
     .help = "epilog: the job's user"},
    {"grace", 'G', CMD_SECONDS(O, grace, 0, 600), .arg = "T",
     .fix = "give a duration from 0 to 600 seconds",
     .help = "epilog: between TERM and KILL (default 5s)"},
    {NULL},
};
#undef O

const struct cmd_entry cmd_slurm_entry = {
    .name = "slurm",
    .args = "gres [--node NAME] | step --vram SIZE [--gpu N] [--swap] [--wait T] | "
            "epilog --job ID --uid UID [--grace T]",
    .summary = "vram under Slurm: the GRES lines for this node, and the plugin's helpers",
    .intro = "  gres      this node's GPU memory as Slurm's count GRES \"vram\": the lines for\n"
             "            slurm.conf and gres.conf, from what vram status measures (each GPU's\n"
             "            memory less the driver's reserve and the desktop's)\n"
             "  step      run by the SPANK plugin as the job's user, in the step's\n"
             "            environment: the step's slice, admitted and made as vram run makes\n"
             "            one; prints the variables its tasks get, holds the slice until its\n"
             "            input closes, then prints the step's peak\n"
             "  epilog    run by the SPANK plugin as root at a job's end: every process of\n"
             "            the job still holding GPU memory (its SLURM_JOB_ID, or its Slurm\n"
             "            cgroup) is ended as vram reclaim ends one, and said\n",
    .opts = slurm_opts,
    .help = "The plugin, its plugstack.conf line and what users type: docs/slurm.md.\n",
    .size = sizeof(struct slurm_opts),
    .defaults = &(const struct slurm_opts){.job = -1, .uid = -1, .grace = -1},
    .max_operands = 1,
    .exec = cmd_slurm,
};

/* This machine's name as slurm.conf's NodeName has it: the short host name. */
static void node_name(char *out, size_t len)
{
    if (gethostname(out, len) < 0)
        snprintf(out, len, "localhost");
    out[len - 1] = '\0';
    out[strcspn(out, ".")] = '\0';
}

/* `vram slurm gres`: a count GRES of bytes, whole MiB, one entry per GPU
 * (typed gpuN where there are several, so a job may name its GPU). */
static int gres(const struct slurm_opts *o)
{
    char err[512];
    struct probe *p;
    int rc = probe_open(&p, "/proc", err, sizeof err);
    if (rc < 0)
        return cmd_no_driver(&cmd_slurm_entry, err, rc);
    struct snap s;
    memset(&s, 0, sizeof s);
    if (probe_sample(p, &s, PROBE_PROCS, clock_wall_ms()) < 0 || s.ngpus == 0) {
        fprintf(stderr, "vram slurm gres: no NVIDIA GPU found: a node without one has no vram "
                        "GRES (leave it out of Gres= for this node)\n");
        snap_free(&s);
        probe_close(p);
        return 1;
    }
    char node[256];
    if (o->node)
        snprintf(node, sizeof node, "%s", o->node);
    else
        node_name(node, sizeof node);
    bool typed = s.ngpus > 1;
    uint64_t mib[64] = {0};
    size_t n = s.ngpus < 64 ? s.ngpus : 64;
    printf("# vram slurm gres: the GPU memory of node %s as Slurm's count GRES \"vram\",\n"
           "# whole MiB, that jobs ask for with --gres=vram:SIZE (docs/slurm.md)\n",
           node);
    for (size_t i = 0; i < n; i++) {
        const struct snap_gpu *g = &s.gpus[i];
        struct acct a;
        acct_gpu(g, &a);
        uint64_t out = a.reserved + a.display;
        uint64_t usable = a.total > out ? a.total - out : 0;
        mib[i] = usable >> 20;
        char b1[32], b2[32], b3[32], b4[32], desk[64] = "";
        if (a.display)
            snprintf(desk, sizeof desk, " and the desktop's %s",
                     units_fmt_size(a.display, b3, sizeof b3));
        printf("#   GPU %zu  %s  %s, less the driver's %s%s: %s for jobs\n", i, g->name,
               units_fmt_size(a.total, b1, sizeof b1), units_fmt_size(a.reserved, b2, sizeof b2),
               desk, units_fmt_size(mib[i] << 20, b4, sizeof b4));
    }
    printf("#\n# slurm.conf, the same on every node and on the controller (add vram to the\n"
           "# GresTypes and Gres= lines already there; AccountingStorageTRES=gres/vram\n"
           "# counts it in accounting too):\n"
           "GresTypes=vram\nNodeName=%s Gres=",
           node);
    for (size_t i = 0; i < n; i++)
        if (typed)
            printf("%svram:gpu%zu:%lluM", i ? "," : "", i, (unsigned long long)mib[i]);
        else
            printf("vram:%lluM", (unsigned long long)mib[i]);
    printf("\n#\n# gres.conf, on this node%s:\n",
           typed ? " (a job's --gres=vram:SIZE counts against them all, and vram\n"
                   "# puts it on a GPU with room; --gres=vram:gpuN:SIZE names the GPU)"
                 : "");
    for (size_t i = 0; i < n; i++) {
        printf("NodeName=%s Name=vram", node);
        if (typed)
            printf(" Type=gpu%zu", i);
        printf(" Count=%lluM Flags=CountOnly\n", (unsigned long long)mib[i]);
    }
    snap_free(&s);
    probe_exiting(p);
    probe_close(p);
    return 0;
}

/* The options each subcommand takes; any other given is bad usage. */
static int only(const struct slurm_opts *o, const char *sub, const char *allowed)
{
    static const char *const names[] = {"node", "vram", "gpu", "swap", "wait", "job", "uid", "grace"};
    bool given[] = {o->node, o->vram, o->gpu, o->swap, o->wait > 0, o->job >= 0, o->uid >= 0,
                    o->grace >= 0};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char key[16];
        snprintf(key, sizeof key, " %s ", names[i]);
        if (given[i] && !strstr(allowed, key))
            return cmd_bad_usage(&cmd_slurm_entry, "--%s is not an option of vram slurm %s",
                                 names[i], sub);
    }
    return 0;
}

static int cmd_slurm(const void *opts, int argc, char **argv)
{
    const struct slurm_opts *o = opts;
    const char *sub = argc > 0 ? argv[0] : "";
    int rc;
    if (!strcmp(sub, "gres")) {
        if ((rc = only(o, sub, " node ")) != 0)
            return rc;
        return gres(o);
    }
    if (!strcmp(sub, "step")) {
        if ((rc = only(o, sub, " vram gpu swap wait ")) != 0)
            return rc;
        if (!o->vram)
            return cmd_bad_usage(&cmd_slurm_entry, "vram slurm step needs --vram SIZE");
        struct slurmstep_ask a = {o->vram, o->gpu, o->swap, o->wait};
        return slurmstep_run(&a);
    }
    if (!strcmp(sub, "epilog")) {
        if ((rc = only(o, sub, " job uid grace ")) != 0)
            return rc;
        if (o->job < 0 || o->uid < 0)
            return cmd_bad_usage(&cmd_slurm_entry, "vram slurm epilog needs --job ID and --uid UID");
        return slurmepilog_run((uint32_t)o->job, (uint32_t)o->uid, o->grace >= 0 ? o->grace : 5);
    }
    if (!*sub)
        return cmd_bad_usage(&cmd_slurm_entry, "say what: gres, step or epilog");
    return cmd_bad_usage(&cmd_slurm_entry, "'%s': gres, step or epilog", sub);
}
