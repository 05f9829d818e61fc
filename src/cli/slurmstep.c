/* slurmstep: a Slurm step's slice, made and held for the SPANK plugin.
 *
 * What Slurm gave the step decides its GPUs: gres/gpu and gres/shard name
 * them in SLURM_STEP_GPUS or SLURM_JOB_GPUS (the node's indexes, which
 * stay right where cgroups renumber CUDA_VISIBLE_DEVICES from 0), else in
 * CUDA_VISIBLE_DEVICES; without either, --gpu (a --gres=vram:gpuN:SIZE),
 * else the GPU with the most room, as `vram run` picks. The slice is then
 * vram run's own: the same admission, group files, and environment. */
#include "cli/slurmstep.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/runenv.h"
#include "app/runplace.h"
#include "app/selfpath.h"
#include "core/err.h"
#include "core/gpuspec.h"
#include "core/units.h"
#include "ipc/group.h"
#include "probe/probe.h"

/* A protocol line to the plugin: the key, then text without a newline. */
static void say(const char *key, const char *text)
{
    printf("%s %.*s\n", key, (int)strcspn(text, "\n"), text);
    fflush(stdout);
}

static int fail(int rc, const char *text)
{
    say("error", text);
    return err_exit_code(rc);
}

/* Whether the environment names live slices of this user's already: a
 * step launched from inside a capped step of the same job. */
static bool nested(void)
{
    const char *groups = getenv("VRAM_CAP_GROUP");
    if (!groups || !*groups)
        return false;
    struct group_view *v = malloc(sizeof *v);
    bool all = v != NULL;
    char path[GROUP_PATH_MAX];
    for (const char *at = groups; all && *at;) {
        size_t len = strcspn(at, ",");
        if (len == 0 || len >= sizeof path) {
            all = false;
            break;
        }
        memcpy(path, at, len);
        path[len] = '\0';
        all = group_read(path, v) == 0 && v->owner == (uint32_t)getuid() && v->creator_alive &&
              v->state == GROUP_ADMITTED;
        at += len + (at[len] == ',');
    }
    free(v);
    return all;
}

/* The GPUs Slurm gave the step, by name, from the first of its variables
 * that names some; or opt; count 0 when none does (any GPU). -1 when a
 * list is malformed. */
static int step_gpus(const char *opt, struct gpuspec_gpus *g, const char **from)
{
    static const char *const vars[] = {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES"};
    memset(g, 0, sizeof *g);
    const char *list = NULL;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0] && !list; i++) {
        const char *v = getenv(vars[i]);
        /* Slurm's word for a GRES without device files */
        if (v && *v && strcmp(v, "NoDevFiles")) {
            list = v;
            *from = vars[i];
        }
    }
    if (!list && opt) {
        list = opt;
        *from = "--gpu";
    }
    if (!list)
        return 0;
    g->named = true;
    for (const char *at = list; *at;) {
        size_t len = strcspn(at, ",");
        if (len == 0 || len >= GPUSPEC_NAME || g->count == GPUSPEC_MAX)
            return -1;
        memcpy(g->name[g->count], at, len);
        g->name[g->count++][len] = '\0';
        at += len + (at[len] == ',');
    }
    return g->count ? 0 : -1;
}

/* Waits for the step's end: the plugin closes our stdin. */
static void hold(void)
{
    char buf[256];
    for (;;) {
        ssize_t r = read(STDIN_FILENO, buf, sizeof buf);
        if (r == 0 || (r < 0 && errno != EINTR))
            return;
    }
}

/* "peak VRAM 1.29 GiB of 6.00 GiB on GPU 0" (each GPU's for several) */
static void report(const struct runplace_choice *c)
{
    char line[1024], b1[32], b2[32];
    size_t at = (size_t)snprintf(line, sizeof line, "peak VRAM");
    struct group_view *v = malloc(sizeof *v);
    for (unsigned i = 0; i < c->n && at < sizeof line; i++) {
        uint64_t peak = v && group_read(c->group_path[i], v) == 0 ? v->peak : 0;
        at += (size_t)snprintf(line + at, sizeof line - at, "%s %s of %s on GPU %u", i ? "," : "",
                               units_fmt_size(peak, b1, sizeof b1),
                               units_fmt_size(c->size[i], b2, sizeof b2), c->gpu[i]);
    }
    free(v);
    say("report", line);
}

int slurmstep_run(const struct slurmstep_ask *a)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* the plugin gone (slurmstepd killed): the slice is still removed */
    signal(SIGPIPE, SIG_IGN);
    if (nested()) {
        say("ready", "the job's slice holds this step");
        return 0;
    }
    char shim[PATH_MAX], why[1024];
    if (selfpath_libvramcap(shim, sizeof shim, why, sizeof why) < 0)
        return fail(VRAM_EFAIL, why);
    struct gpuspec_gpus gpus;
    const char *from = NULL;
    char err[1200];
    if (step_gpus(a->gpu, &gpus, &from) < 0) {
        snprintf(err, sizeof err, "%s names no GPUs vram can read", from ? from : "the step");
        return fail(VRAM_EINPUT, err);
    }
    struct probe *p;
    int rc = probe_open(&p, "/proc", err, sizeof err);
    if (rc < 0) {
        char line[1600], host[256] = "";
        gethostname(host, sizeof host - 1);
        snprintf(line, sizeof line, "node %s has no GPU driver vram can use: %s", host, err);
        return fail(rc, line);
    }
    struct snap s;
    memset(&s, 0, sizeof s);
    struct gpuspec_sizes sizes = {.n = 1, .size = {a->vram}};
    struct runplace_opts ro = {a->wait > 0, a->wait, true, "vram", NULL};
    struct runplace_choice place;
    rc = runplace_pick(p, &s, gpus.count ? &gpus : NULL, &sizes, &ro, &place, err, sizeof err);
    if (rc < 0) {
        snap_free(&s);
        probe_close(p);
        if (from && rc == VRAM_EINPUT) {
            char line[1400];
            snprintf(line, sizeof line, "%s (from %s)", err, from);
            return fail(rc, line);
        }
        return fail(rc, err);
    }
    struct runenv e;
    if (runenv_make(&e, &place, &s, shim, getenv("LD_PRELOAD"), a->swap) < 0) {
        runplace_done(&place);
        snap_free(&s);
        probe_close(p);
        return fail(VRAM_EFAIL, "out of memory");
    }
    for (unsigned i = 0; i < e.n; i++) {
        char line[8192];
        if (strchr(e.var[i].value, '\n') ||
            (size_t)snprintf(line, sizeof line, "%s=%s", e.var[i].name, e.var[i].value) >=
                sizeof line) {
            snprintf(err, sizeof err, "%s is too long or holds a newline", e.var[i].name);
            runenv_free(&e);
            runplace_done(&place);
            snap_free(&s);
            probe_close(p);
            return fail(VRAM_EINPUT, err);
        }
        say("env", line);
    }
    runenv_free(&e);
    snap_free(&s);
    probe_exiting(p);
    probe_close(p); /* nothing of the driver held while the step runs */
    say("ready", "");
    hold();
    report(&place);
    runplace_done(&place);
    return 0;
}
