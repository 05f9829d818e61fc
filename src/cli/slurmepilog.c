/* slurmepilog: a Slurm job's processes still holding GPU memory at its end.
 *
 * The tag that finds them is the job's own: SLURM_JOB_ID in the
 * environment every task and batch script starts with, which a daemon the
 * job left behind inherits; and, where Slurm tracks jobs by cgroup, the
 * job's cgroup. Neither is a proof (a process may change its environment,
 * and anyone may write SLURM_JOB_ID=N in their own), so a process is only
 * ever the job's when it is also the job's user's: a tag can get nothing
 * ended but its own user's processes, which that user could end anyway. */
#include "cli/slurmepilog.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/cgroup.h"
#include "host/clock.h"
#include "host/pidref.h"
#include "host/proc.h"
#include "core/err.h"
#include "core/units.h"
#include "probe/probe.h"

#define MAX_LEFT 256

struct left {
    uint32_t pid;
    uint64_t bytes;
    unsigned gpu;
    bool stopped;
    char name[SNAP_NAME_MAX];
    struct pidref ref;
};

static bool in_job_cgroup(uint32_t pid, uint32_t job)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%u/cgroup", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    return n > 0 && cgroup_slurm_job(buf, (size_t)n, job);
}

static bool of_job(const struct snap_proc *p, uint32_t job, uint32_t uid)
{
    char tag[32];
    snprintf(tag, sizeof tag, "SLURM_JOB_ID=%u", (unsigned)job);
    return p->host_known && p->pid > 1 && p->pid != (uint32_t)getpid() && p->uid == uid &&
           (p->types & (SNAP_PT_COMPUTE | SNAP_PT_GRAPHICS)) &&
           (hostproc_environ_has(p->pid, tag) || in_job_cgroup(p->pid, job));
}

/* The job's processes on the GPUs now, each once (its memory on all of
 * them added up, the GPU of the most named). */
static size_t find(const struct snap *s, uint32_t job, uint32_t uid, struct left *out)
{
    size_t n = 0;
    for (size_t g = 0; g < s->ngpus; g++)
        for (size_t i = 0; i < s->gpus[g].nprocs; i++) {
            const struct snap_proc *p = &s->gpus[g].procs[i];
            if (!of_job(p, job, uid))
                continue;
            size_t k = 0;
            while (k < n && out[k].pid != p->pid)
                k++;
            if (k == n) {
                if (n == MAX_LEFT)
                    continue;
                memset(&out[n], 0, sizeof out[n]);
                out[n].pid = p->pid;
                out[n].gpu = (unsigned)g;
                out[n].stopped = p->state == SNAP_PS_STOPPED;
                snprintf(out[n].name, sizeof out[n].name, "%s", p->name);
                n++;
            }
            uint64_t b = p->used_known ? p->used : 0;
            if (b > out[k].bytes)
                out[k].gpu = (unsigned)g;
            out[k].bytes += b;
        }
    return n;
}

static bool still_listed(const struct snap *s, uint32_t pid)
{
    for (size_t g = 0; g < s->ngpus; g++)
        for (size_t i = 0; i < s->gpus[g].nprocs; i++)
            if (s->gpus[g].procs[i].pid == pid)
                return true;
    return false;
}

int slurmepilog_run(uint32_t job, uint32_t uid, double grace)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    char err[512];
    struct probe *p;
    int rc = probe_open(&p, "/proc", err, sizeof err);
    if (rc < 0) {
        printf("job %u: no GPU memory to check on this node (%s)\n", (unsigned)job, err);
        return err_exit_code(rc);
    }
    struct snap s;
    memset(&s, 0, sizeof s);
    struct left *t = calloc(MAX_LEFT, sizeof *t);
    size_t n = 0;
    if (t && probe_sample(p, &s, PROBE_PROCS, clock_wall_ms()) == 0)
        n = find(&s, job, uid, t);
    if (n == 0)
        printf("job %u: no process of the job holds GPU memory\n", (unsigned)job);
    char b[32];
    size_t held = 0;
    for (size_t i = 0; i < n; i++) {
        if (pidref_hold(&t[i].ref, (int)t[i].pid) < 0)
            continue; /* gone since the sample */
        printf("job %u left pid %u (%s) holding %s on GPU %u: ending it (TERM, %.0f s, KILL)\n",
               (unsigned)job, t[i].pid, t[i].name, units_fmt_size(t[i].bytes, b, sizeof b),
               t[i].gpu, grace);
        t[held++] = t[i];
    }
    for (size_t i = 0; i < held; i++)
        pidref_end(&t[i].ref, t[i].stopped, grace);
    int still = 0;
    if (held) {
        /* the driver lets go of a process's memory a moment after it exits */
        for (int tries = 0; tries < 20; tries++) {
            probe_sample(p, &s, PROBE_PROCS, clock_wall_ms());
            still = 0;
            for (size_t i = 0; i < held; i++)
                still += still_listed(&s, t[i].pid);
            if (!still)
                break;
            usleep(100 * 1000);
        }
        for (size_t i = 0; i < held; i++) {
            bool there = still_listed(&s, t[i].pid);
            printf("job %u: pid %u %s\n", (unsigned)job, t[i].pid,
                   there ? "STILL holds GPU memory after SIGKILL (stuck in the driver?)"
                         : "ended; its GPU memory is back");
            pidref_close(&t[i].ref);
        }
    }
    free(t);
    snap_free(&s);
    probe_exiting(p);
    probe_close(p);
    return still ? 1 : 0;
}
