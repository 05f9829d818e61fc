/* spank_vram: vram's SPANK plugin. It adds --vram=SIZE to srun, sbatch and
 * salloc; every task of a step that asked for it (or for --gres=vram:SIZE)
 * runs under that cap with fast swap, exactly as under `vram run --vram
 * SIZE --swap`; the step's peak goes to the job's output and AdminComment;
 * at each job's end no process of the job may still hold GPU memory.
 * The work is vram's own (`vram slurm step`, `vram slurm epilog`), run as
 * a child: this file is the glue to Slurm's callbacks (docs/slurm.md).
 *
 *   srun/sbatch/salloc   init: --vram registered, its value checked
 *   slurmstepd           user_init: `vram slurm step` started as the
 *                        job's user; its variables put in the tasks'
 *                        environment (task_init fails each task of a
 *                        step refused its cap). task_exit of the last task (or
 *                        exit): its input closed, its report read, said
 *                        in the job's output and AdminComment
 *   slurmd's epilog      job_epilog: `vram slurm epilog` as root, its
 *                        lines in slurmd's log */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "core/gresreq.h"
#include "core/units.h"
#include "slurm/jobrec.h"
#include "slurm/spankconf.h"
#include "slurm/vramexec.h"

#ifndef VRAM_BINDIR
#define VRAM_BINDIR "/usr/bin"
#endif

/* the batch script's step id (slurm.h: SLURM_BATCH_SCRIPT) */
#define BATCH_STEP 0xfffffffbu

static struct spankconf conf;
static bool conf_read;
static char *vram_arg;       /* --vram as typed, checked */
static struct vramexec step; /* `vram slurm step`, while the step runs */
static bool step_held;       /* step is ours to end */
/* the step asked for a cap it cannot have: its tasks fail (said once) */
static bool refused;
static uint32_t tasks_ended;

static int vram_option(int val, const char *optarg, int remote);

static struct spank_option vram_opt = {
    "vram", "SIZE",
    "cap the GPU memory of each task's process tree at SIZE (6G, 512M) on each of its GPUs, "
    "with fast swap, as vram run --vram SIZE --swap; default: the job's --gres=vram:SIZE",
    1, 0, vram_option};

/* A size of at least 1M: 0, or -1 said as Slurm says a bad option. */
static int check_size(const char *what, const char *arg, uint64_t *out)
{
    uint64_t v = 0;
    if (!arg || units_parse_size(arg, &v) < 0 || v < UNITS_MiB) {
        slurm_error("%s=%s: give a size of at least 1M, such as 6G or 512M", what,
                    arg ? arg : "");
        return -1;
    }
    *out = v;
    return 0;
}

static int vram_option(int val, const char *optarg, int remote)
{
    (void)val, (void)remote;
    uint64_t v;
    if (check_size("--vram", optarg, &v) < 0)
        return -1;
    free(vram_arg);
    vram_arg = strdup(optarg);
    return vram_arg ? 0 : -1;
}

/* "step 3", "batch step", with the node where the job has several. */
static void step_name(spank_t sp, char *out, size_t len)
{
    uint32_t id = 0, nodes = 1;
    spank_get_item(sp, S_JOB_STEPID, &id);
    spank_get_item(sp, S_JOB_NNODES, &nodes);
    int at = id == BATCH_STEP ? snprintf(out, len, "batch step") : snprintf(out, len, "step %u", id);
    char host[256];
    if (nodes > 1 && at > 0 && (size_t)at < len && gethostname(host, sizeof host) == 0) {
        host[sizeof host - 1] = '\0';
        host[strcspn(host, ".")] = '\0';
        snprintf(out + at, len - (size_t)at, " on %s", host);
    }
}

/* The cap: --vram, else the job's --gres=vram; checked against each
 * other. 0 (bytes 0: no cap asked), or -1 said. gpu: a GPU the GRES's
 * type names, or -1. */
static int step_cap(spank_t sp, uint64_t *bytes, int *gpu)
{
    *bytes = 0;
    *gpu = -1;
    if (vram_arg && check_size("--vram", vram_arg, bytes) < 0)
        return -1;
    uint32_t job = 0;
    spank_get_item(sp, S_JOB_ID, &job);
    struct gresreq g;
    char err[512], b[32];
    if (jobrec_vram(job, &g, err, sizeof err) < 0) {
        /* --vram alone still caps; without it, whether the job asked the
         * GRES is unknown: said, and the step left as Slurm started it
         * rather than every step of the cluster failed */
        if (!vram_arg)
            slurm_error("vram: %s; the step runs without a cap", err);
        return 0;
    }
    if (!g.found)
        return 0;
    if (g.count < UNITS_MiB) {
        slurm_error("vram: --gres=vram:%llu asks for %llu bytes of GPU memory: give a size with "
                    "its unit, such as --gres=vram:6G",
                    (unsigned long long)g.count, (unsigned long long)g.count);
        return -1;
    }
    if (*bytes > g.count) {
        slurm_error("vram: --vram=%s is more than the job's --gres=vram (%s, what Slurm counted "
                    "for it on this node); ask --gres=vram:%s",
                    vram_arg, units_fmt_size(g.count, b, sizeof b), vram_arg);
        return -1;
    }
    if (!*bytes)
        *bytes = g.count;
    *gpu = gresreq_gpu_of(g.type);
    return 0;
}

/* Who the job runs as, for its helper. */
static void job_user(spank_t sp, struct vramexec_as *as)
{
    memset(as, 0, sizeof *as);
    spank_get_item(sp, S_JOB_UID, &as->uid);
    spank_get_item(sp, S_JOB_GID, &as->gid);
    gid_t *groups = NULL;
    int n = 0;
    if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &groups, &n) == ESPANK_SUCCESS && groups) {
        as->groups = groups;
        as->ngroups = n;
    } else {
        as->groups = &as->gid;
        as->ngroups = 1;
    }
    as->change = getuid() == 0 || geteuid() == 0;
}

/* Something else the helper said (its own messages, on stderr): to the
 * user, named as vram's. */
static void relay(const char *line)
{
    if (strncmp(line, "vram", 4))
        slurm_spank_log("vram: %s", line);
    else
        slurm_spank_log("%s", line);
}

/* Reads the step helper's answer: its variables into the tasks'
 * environment until "ready". 0, or -1 said. */
static int step_answer(spank_t sp)
{
    char line[16384];
    int ms = (int)(conf.wait * 1000) + 60 * 1000;
    for (;;) {
        int r = vramexec_line(&step, line, sizeof line, ms);
        if (r <= 0) {
            slurm_error("vram: %s slurm step %s", conf.vram,
                        r < 0 ? "did not answer within a minute" : "ended without an answer");
            return -1;
        }
        if (!strncmp(line, "env ", 4)) {
            char *eq = strchr(line + 4, '=');
            if (!eq || eq == line + 4)
                continue;
            *eq = '\0';
            if (spank_setenv(sp, line + 4, eq + 1, 1) != ESPANK_SUCCESS) {
                slurm_error("vram: cannot set %s in the step's environment", line + 4);
                return -1;
            }
        } else if (!strncmp(line, "ready", 5)) {
            return 0;
        } else if (!strncmp(line, "error ", 6)) {
            slurm_error("vram: %s", line + 6);
            return -1;
        } else if (line[0]) {
            relay(line);
        }
    }
}

/* In slurmstepd, as the job's user: the step's slice. */
static int start_step(spank_t sp)
{
    uint64_t cap;
    int gpu;
    if (step_cap(sp, &cap, &gpu) < 0)
        return -1;
    if (!cap)
        return 0;
    char size[32], wait[32], gpus[16];
    snprintf(size, sizeof size, "%llu", (unsigned long long)cap);
    snprintf(wait, sizeof wait, "%.3f", conf.wait);
    snprintf(gpus, sizeof gpus, "%d", gpu);
    char *argv[12];
    int n = 0;
    argv[n++] = (char *)conf.vram;
    argv[n++] = "slurm";
    argv[n++] = "step";
    argv[n++] = "--vram";
    argv[n++] = size;
    if (conf.swap)
        argv[n++] = "--swap";
    if (conf.wait > 0) {
        argv[n++] = "--wait";
        argv[n++] = wait;
    }
    if (gpu >= 0) {
        argv[n++] = "--gpu";
        argv[n++] = gpus;
    }
    argv[n] = NULL;
    char **env = NULL;
    if (spank_get_item(sp, S_JOB_ENV, &env) != ESPANK_SUCCESS || !env) {
        slurm_error("vram: cannot read the step's environment");
        return -1;
    }
    struct vramexec_as as;
    job_user(sp, &as);
    char err[512];
    if (vramexec_start(&step, argv, env, &as, err, sizeof err) < 0) {
        slurm_error("vram: cannot start %s: %s", conf.vram, err);
        return -1;
    }
    step_held = true;
    if (step_answer(sp) < 0) {
        vramexec_end(&step, 5000);
        step_held = false;
        return -1;
    }
    return 0;
}

/* The step's end: the helper's report, in the job's output and its
 * AdminComment; then the slice is gone. */
static void end_step(spank_t sp)
{
    if (!step_held)
        return;
    step_held = false;
    vramexec_close_input(&step);
    char line[4096], name[300];
    step_name(sp, name, sizeof name);
    uint32_t job = 0;
    spank_get_item(sp, S_JOB_ID, &job);
    while (vramexec_line(&step, line, sizeof line, 30 * 1000) > 0) {
        if (!strncmp(line, "report ", 7)) {
            char note[4400], err[512];
            slurm_spank_log("vram: %s: %s", name, line + 7);
            snprintf(note, sizeof note, "vram %s: %s", name, line + 7);
            int rc = jobrec_note(job, note, err, sizeof err);
            if (rc < 0)
                slurm_error("vram: %s", err);
            else if (rc > 0)
                slurm_debug("vram: job %u ended before its record: %s", job, note);
        } else if (!strncmp(line, "error ", 6)) {
            slurm_error("vram: %s", line + 6);
        } else if (line[0]) {
            relay(line);
        }
    }
    vramexec_end(&step, 5000);
}

/* In the job's epilog, as root: what the job left on the GPUs. */
static int job_epilog(spank_t sp)
{
    uint32_t job = 0;
    uid_t uid = 0;
    if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS)
        return 0;
    char sjob[16], suid[16], grace[32];
    snprintf(sjob, sizeof sjob, "%u", job);
    snprintf(suid, sizeof suid, "%u", (unsigned)uid);
    snprintf(grace, sizeof grace, "%.3f", conf.grace);
    char *argv[] = {(char *)conf.vram, "slurm", "epilog", "--job", sjob, "--uid", suid,
                    "--grace", grace, NULL};
    char *env[SPANKCONF_ENV + 2];
    unsigned n = 0;
    env[n++] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    for (unsigned i = 0; i < conf.nenv; i++)
        env[n++] = (char *)conf.env[i];
    env[n] = NULL;
    struct vramexec x;
    struct vramexec_as as = {0};
    char err[512], line[4096];
    if (vramexec_start(&x, argv, env, &as, err, sizeof err) < 0) {
        slurm_error("vram: job %u's epilog: cannot start %s: %s", job, conf.vram, err);
        return 0;
    }
    int ms = (int)(conf.grace * 1000) + 30 * 1000;
    while (vramexec_line(&x, line, sizeof line, ms) > 0) {
        /* what it ended, loud; that there was nothing, only when asked */
        if (strstr(line, " left pid ") || strstr(line, "STILL") || !strncmp(line, "error ", 6))
            slurm_error("vram: %s", line);
        else if (strstr(line, " ended"))
            slurm_info("vram: %s", line);
        else
            slurm_debug("vram: %s", line);
    }
    vramexec_end(&x, 5000);
    return 0; /* never a failed epilog: Slurm would drain the node for it */
}

/* The plugstack.conf arguments: every callback gets them, and the job
 * script's context (the epilog) has no init. 0, or -1 said. */
static int read_conf(int ac, char **av)
{
    char err[512];
    if (conf_read)
        return 0;
    if (spankconf_parse(ac, av, VRAM_BINDIR "/vram", &conf, err, sizeof err) < 0) {
        slurm_error("vram: %s", err);
        return -1;
    }
    conf_read = true;
    return 0;
}

#pragma GCC visibility push(default)

SPANK_PLUGIN(vram, 1);

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    if (read_conf(ac, av) < 0)
        return -1;
    spank_context_t c = spank_context();
    if ((c == S_CTX_LOCAL || c == S_CTX_REMOTE || c == S_CTX_ALLOCATOR) &&
        spank_option_register(sp, &vram_opt) != ESPANK_SUCCESS) {
        slurm_error("vram: cannot register --vram");
        return -1;
    }
    return 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
    (void)ac, (void)av;
    if (spank_context() != S_CTX_REMOTE)
        return 0;
    step.pid = -1;
    tasks_ended = 0;
    /* a failed user_init leaves srun's exit status 0 and the job
     * COMPLETED: the tasks fail instead (task_init), as the user sees */
    refused = start_step(sp) < 0;
    return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    (void)sp, (void)ac, (void)av;
    return refused ? -1 : 0;
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
    (void)ac, (void)av;
    uint32_t tasks = 0;
    spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &tasks);
    if (++tasks_ended >= tasks)
        end_step(sp);
    return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
    (void)ac, (void)av;
    if (spank_context() == S_CTX_REMOTE)
        end_step(sp);
    free(vram_arg);
    vram_arg = NULL;
    return 0;
}

int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
    if (read_conf(ac, av) < 0)
        return 0; /* said; a failed epilog would drain the node */
    return conf.epilog ? job_epilog(sp) : 0;
}

#pragma GCC visibility pop
