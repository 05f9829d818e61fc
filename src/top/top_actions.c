/* top_actions: signals, child commands and the details' figures.
 *
 * A suspend takes seconds (the GPU's memory crosses PCIe), so top never
 * does one itself: it runs `vram suspend PID|MODEL` as a child with its
 * output on a pipe, keeps drawing, and shows the child's last line when
 * it ends. The child is the command a user would type, so its checks are
 * the command's (another user's process only as root, as kill; a model
 * through its daemon's socket). SIGPIPE is ignored before a child starts,
 * and the child inherits that: top quitting first never kills a suspend
 * half done. */
#include "top/top_actions.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/served.h"
#include "cli/suspendrec.h"
#include "top/top_rows.h"
#include "core/textsafe.h"
#include "core/units.h"
#include "host/proc.h"

extern char **environ;

enum job_kind { JOB_VERB, JOB_MODELS };

struct job {
    pid_t pid;
    int fd;
    enum job_kind kind;
    char what[128]; /* "suspend 4242", "unload qwen" */
    char model[SNAP_NAME_MAX];
    char out[65536];
    size_t len;
};

static struct job jobs[2]; /* one verb and one vram ps at a time */
static struct probe *probe;

static struct job *slot(enum job_kind k)
{
    return &jobs[k];
}

/* Runs `vram ARGS` with its output on a pipe into j. 0, or -1 with why
 * in msg. */
static int spawn(struct job *j, char *const argv[], char *msg, size_t len)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0) {
        snprintf(msg, len, "cannot run vram %s: %s", argv[1], strerror(errno));
        return -1;
    }
    signal(SIGPIPE, SIG_IGN);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    pid_t pid;
    int rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        snprintf(msg, len, "cannot run vram %s: %s", argv[1], strerror(rc));
        return -1;
    }
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    j->pid = pid;
    j->fd = fds[0];
    j->len = 0;
    return 0;
}

/* The signals: the user's own processes (any when root), still the same
 * process (pid reuse: the start time must match) and never pid 1. */
static void send_signal(struct top *t, int sig, const struct snap_proc *p)
{
    struct hostproc_ctx ctx;
    hostproc_init(&ctx, "/proc");
    struct snap_proc now = *p;
    if (p->pid <= 1 || !p->host_known) {
        snprintf(t->msg, sizeof t->msg, "pid %u: not a process vram may signal", p->pid);
    } else if (t->uid != 0 && p->uid != t->uid) {
        snprintf(t->msg, sizeof t->msg,
                 "pid %u belongs to %s: only root signals other users' processes", p->pid,
                 p->user);
    } else if (hostproc_fill(&ctx, &now) < 0 || now.start_time != p->start_time) {
        snprintf(t->msg, sizeof t->msg, "pid %u has exited; nothing sent", p->pid);
    } else if (kill((pid_t)p->pid, sig) < 0) {
        snprintf(t->msg, sizeof t->msg, "pid %u: %s", p->pid, strerror(errno));
    } else {
        snprintf(t->msg, sizeof t->msg, "sent %s to %u (%s)", sig == SIGKILL ? "KILL" : "TERM",
                 p->pid, p->name);
    }
}

static void act(struct top *t, enum top_verb v, const struct top_row *r)
{
    const struct snap_proc *p = &r->proc;
    if (v == TOP_TERM || v == TOP_KILL || (v == TOP_STOP && !p->model[0])) {
        send_signal(t, v == TOP_KILL ? SIGKILL : SIGTERM, p);
        return;
    }
    struct job *j = slot(JOB_VERB);
    if (j->pid) {
        snprintf(t->msg, sizeof t->msg, "wait: vram %s is still at work", j->what);
        return;
    }
    const char *verb = v == TOP_SUSPEND ? "suspend" : v == TOP_RESUME ? "resume" : "unload";
    char target[SNAP_NAME_MAX + 16];
    /* a model's process: the daemon moves all of the model, or stops it */
    if (p->model[0])
        snprintf(target, sizeof target, "%s", p->model);
    else
        snprintf(target, sizeof target, "%u", p->pid);
    char *argv[] = {"vram", (char *)verb, target, NULL};
    if (spawn(j, argv, t->msg, sizeof t->msg) < 0)
        return;
    j->kind = JOB_VERB;
    snprintf(j->what, sizeof j->what, "%s %s", verb, target);
    snprintf(t->msg, sizeof t->msg, "vram %s ...", j->what);
}

static void detail(struct top *t, const struct top_row *r)
{
    struct probe_detail d;
    struct top_info *in = &t->info;
    memset(in, 0, sizeof *in);
    in->pid = r->proc.pid;
    if (probe_detail(probe, r->proc.pid, &d) == 0) {
        snprintf(in->cmdline, sizeof in->cmdline, "%s", d.cmdline);
        snprintf(in->cgroup, sizeof in->cgroup, "%s", d.cgroup);
        in->have = true;
    }
    struct job *j = slot(JOB_MODELS);
    if (!r->proc.model[0] || j->pid)
        return;
    char *argv[] = {"vram", "ps", "--json", NULL};
    char why[300];
    if (spawn(j, argv, why, sizeof why) < 0) {
        snprintf(in->model_state, sizeof in->model_state, "%s", why);
        return;
    }
    j->kind = JOB_MODELS;
    snprintf(j->what, sizeof j->what, "ps");
    snprintf(j->model, sizeof j->model, "%s", r->proc.model);
}

static int host(void *ctx, struct snap_proc *p)
{
    return probe_host(ctx, p);
}

const struct top_ops *top_actions_ops(struct probe *p, bool may_act)
{
    static struct top_ops ops;
    probe = p;
    ops = (struct top_ops){may_act ? act : NULL, detail, host, p,
                           "its processes are read from --proc-root, not this machine's"};
    return &ops;
}

/* Whether the driver lists pid, or (model not NULL) a process of model:
 * a model whose workers hold the GPU is on it, whatever its main does. */
static bool listed(const struct snap *s, uint32_t pid, const char *model)
{
    for (size_t g = 0; g < s->ngpus; g++)
        for (size_t i = 0; i < s->gpus[g].nprocs; i++)
            if (s->gpus[g].procs[i].pid == pid ||
                (model && !strcmp(s->gpus[g].procs[i].model, model)))
                return true;
    return false;
}

#define AWAY_MAX 64

void top_actions_away(struct top *t)
{
    int pids[AWAY_MAX];
    struct suspendrec recs[AWAY_MAX];
    struct served_main mains[AWAY_MAX];
    size_t nrec = suspendrec_list(pids, recs, AWAY_MAX), nmain;
    served_mark_mains(&t->snap, mains, AWAY_MAX, &nmain);
    struct top_row *v = calloc(nrec + nmain + 1, sizeof *v);
    if (!v)
        return;
    size_t n = 0;
    for (size_t k = 0; k < nrec + nmain; k++) {
        bool rec = k < nrec;
        uint32_t pid = rec ? (uint32_t)pids[k] : mains[k - nrec].pid;
        /* a record of a process gone, or back on its GPU, is no row */
        if (listed(&t->snap, pid, rec ? NULL : mains[k - nrec].model) ||
            (rec && hostproc_start_ticks(pid) != recs[k].start))
            continue;
        bool dup = false;
        for (size_t i = 0; i < n; i++)
            dup |= v[i].proc.pid == pid;
        struct top_row *r = &v[n];
        memset(r, 0, sizeof *r); /* what a refused one before left */
        r->proc.pid = pid;
        if (dup || probe_host(probe, &r->proc) < 0)
            continue;
        r->gpu = TOP_NO_GPU;
        for (size_t g = 0; rec && g < t->snap.ngpus; g++)
            if (!strcmp(t->snap.gpus[g].uuid, recs[k].uuid))
                r->gpu = (unsigned)g;
        r->away = rec ? TOP_SUSPENDED : TOP_MODEL_AWAY;
        r->away_bytes = rec ? recs[k].bytes : 0;
        if (!rec)
            snprintf(r->proc.model, sizeof r->proc.model, "%s", mains[k - nrec].model);
        n++;
    }
    free(t->away);
    t->away = v;
    t->naway = n;
}

int top_actions_fds(struct pollfd *fds, int max)
{
    int n = 0;
    for (size_t k = 0; k < sizeof jobs / sizeof jobs[0] && n < max; k++)
        if (jobs[k].pid && jobs[k].fd >= 0)
            fds[n++] = (struct pollfd){.fd = jobs[k].fd, .events = POLLIN};
    return n;
}

static const char *last_line(struct job *j, char *out, size_t len);

/* What a command said first, not indented (its outcome: the lines under
 * it are notes), else its last line; made safe to show. */
static const char *summary(struct job *j, char *out, size_t len)
{
    for (size_t at = 0; at < j->len;) {
        size_t end = at;
        while (end < j->len && j->out[end] != '\n' && j->out[end] != '\r')
            end++;
        if (end > at && j->out[at] != ' ' && j->out[at] != '\t')
            return textsafe_copy(j->out + at, end - at, out, len);
        at = end + 1;
    }
    return last_line(j, out, len);
}

/* The last line a child printed, made safe to show. */
static const char *last_line(struct job *j, char *out, size_t len)
{
    size_t end = j->len;
    while (end && (j->out[end - 1] == '\n' || j->out[end - 1] == '\r' || j->out[end - 1] == ' '))
        end--;
    size_t start = end;
    while (start && j->out[start - 1] != '\n' && j->out[start - 1] != '\r')
        start--;
    return textsafe_copy(j->out + start, end - start, out, len);
}

/* vram ps --json's word on one model: "ready on GPU 0, 5.30 GiB". */
static void model_state(struct top *t, struct job *j, int status)
{
    char *s = t->info.model_state, line[300];
    size_t len = sizeof t->info.model_state;
    json_error_t e;
    json_t *doc = json_loadb(j->out, j->len, 0, &e), *m;
    size_t i;
    snprintf(s, len, "vram serve does not answer (%s)", last_line(j, line, sizeof line));
    json_array_foreach(json_object_get(doc, "models"), i, m)
    {
        const char *name = json_string_value(json_object_get(m, "name"));
        if (!name || strcmp(name, j->model))
            continue;
        const char *st = json_string_value(json_object_get(m, "state"));
        json_t *gpu = json_object_get(m, "gpu");
        char b[32], safe[64];
        int n = snprintf(s, len, "%s", textsafe_copy(st ? st : "?", SIZE_MAX, safe, sizeof safe));
        if (json_is_integer(gpu) && n > 0 && (size_t)n < len)
            snprintf(s + n, len - (size_t)n, " on GPU %lld, %s", (long long)json_integer_value(gpu),
                     units_fmt_size((uint64_t)json_integer_value(json_object_get(m, "vram_bytes")),
                                    b, sizeof b));
        break;
    }
    if (!doc && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        snprintf(s, len, "vram ps gave no JSON");
    json_decref(doc);
}

/* What a child said, until the end of its output (-1: it is done
 * writing). */
static void drain(struct job *j)
{
    char sink[4096];
    for (;;) {
        size_t room = sizeof j->out - 1 - j->len;
        /* past the buffer: read on, and drop the rest */
        ssize_t n = room ? read(j->fd, j->out + j->len, room) : read(j->fd, sink, sizeof sink);
        if (n > 0) {
            if (room)
                j->len += (size_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        close(j->fd);
        j->fd = -1;
        j->out[j->len] = '\0';
        return;
    }
}

bool top_actions_poll(struct top *t)
{
    bool changed = false;
    for (size_t k = 0; k < sizeof jobs / sizeof jobs[0]; k++) {
        struct job *j = &jobs[k];
        int status = 0;
        if (!j->pid)
            continue;
        if (j->fd >= 0)
            drain(j);
        /* its output ended: it has exited, or is about to (reaped later) */
        if (j->fd >= 0 || waitpid(j->pid, &status, WNOHANG) == 0)
            continue;
        if (j->kind == JOB_MODELS) {
            if (t->info.pid && t->sel < t->nrows && !strcmp(t->rows[t->sel].proc.model, j->model))
                model_state(t, j, status);
        } else {
            char line[240];
            bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
            summary(j, line, sizeof line);
            snprintf(t->msg, sizeof t->msg, "vram %s: %s", j->what,
                     line[0] ? line : ok ? "done" : "failed");
        }
        j->pid = 0;
        changed = true;
    }
    return changed;
}

bool top_actions_busy(void)
{
    for (size_t k = 0; k < sizeof jobs / sizeof jobs[0]; k++)
        if (jobs[k].pid)
            return true;
    return false;
}

void top_actions_end(void)
{
    for (size_t k = 0; k < sizeof jobs / sizeof jobs[0]; k++)
        if (jobs[k].pid) {
            if (jobs[k].kind == JOB_VERB)
                fprintf(stderr, "vram top: vram %s goes on (pid %d)\n", jobs[k].what,
                        (int)jobs[k].pid);
            if (jobs[k].fd >= 0)
                close(jobs[k].fd);
            jobs[k].pid = 0;
        }
}
