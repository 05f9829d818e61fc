/* served: the processes of a snapshot that are models of a vram serve.
 *
 * A daemon records each model's main process in its state (pid, start
 * time, name: app/store.h) and runs it in a cgroup of its own, vram-PID
 * under the daemon's, which the model's other processes inherit; where no
 * cgroup could be made, they carry VRAM_MODEL_PID=PID (host/family.h).
 * So a process is a model's when a state file names it (the same process:
 * the start time matches), or when it shares that main process's cgroup
 * vram-PID, or carries its tag.
 *
 * Nothing here may be fooled by another user: a state file counts only if
 * root or the caller owns it (store_open_readonly), and one of a user
 * names only that user's processes; a process in a cgroup is a model's
 * only in the very cgroup its main process is in (which only the daemon's
 * user or root can put a process in); a tag counts only on a process of
 * the main process's own user. A process that calls itself after a model
 * protects nothing. */
#include "cli/served.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/paths.h"
#include "app/store.h"
#include "conf/config.h"
#include "host/cgroup.h"
#include "host/family.h"
#include "host/proc.h"

#define SERVED_MAX 256

struct main_proc {
    uint32_t pid, uid;
    char name[SNAP_NAME_MAX];
    char cgroup[256]; /* its cgroup when that is its own vram-PID, else "" */
};

struct served {
    struct main_proc v[SERVED_MAX];
    size_t n;
};

/* pid's cgroup (v2 path, or v1's first) into out; -1 if unreadable. */
static int cgroup_of(uint32_t pid, char *out, size_t len)
{
    char path[64], text[4096], id[128];
    snprintf(path, sizeof path, "/proc/%u/cgroup", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return -1;
    text[n] = '\0';
    return cgroup_parse(text, (size_t)n, out, len, id, sizeof id);
}

/* Whether cgroup path is "/.../vram-PID". */
static bool own_cgroup(const char *cg, uint32_t pid)
{
    char want[24];
    int n = snprintf(want, sizeof want, "/vram-%u", pid);
    size_t l = strlen(cg);
    return n > 0 && l >= (size_t)n && !strcmp(cg + l - (size_t)n, want);
}

/* The main processes a state file names, still running (the same start
 * time), and of a user the file's owner may speak for. */
static void read_state(const char *path, struct served *s)
{
    struct stat st;
    struct store *db = stat(path, &st) == 0 ? store_open_readonly(path) : NULL;
    if (!db)
        return;
    struct store_proc p[CONFIG_MAX_MODELS * 2];
    size_t n = store_procs(db, p, sizeof p / sizeof p[0]);
    store_close(db);
    for (size_t i = 0; i < n && s->n < SERVED_MAX; i++) {
        uint32_t pid = p[i].pid > 0 ? (uint32_t)p[i].pid : 0, uid;
        if (!pid || !p[i].start || hostproc_start_ticks(pid) != p[i].start ||
            hostproc_uid(pid, &uid) < 0 || (st.st_uid != 0 && st.st_uid != uid))
            continue;
        bool dup = false;
        for (size_t k = 0; k < s->n; k++)
            dup |= s->v[k].pid == pid;
        if (dup)
            continue;
        struct main_proc *m = &s->v[s->n++];
        memset(m, 0, sizeof *m);
        m->pid = pid;
        m->uid = uid;
        snprintf(m->name, sizeof m->name, "%s", p[i].model);
        if (cgroup_of(pid, m->cgroup, sizeof m->cgroup) < 0 || !own_cgroup(m->cgroup, pid))
            m->cgroup[0] = '\0';
    }
}

/* The daemons whose state is read: the one vram serve would run here
 * ($VRAM_CONFIG, else this user's configuration), and the system's. */
static void find_mains(struct served *s)
{
    struct paths def;
    paths_default(&def);
    const char *env = getenv("VRAM_CONFIG");
    const char *mine = env && *env ? env : def.config;
    char states[4][CONFIG_PATH_MAX];
    size_t n = 0;
    n += config_state_of(mine, states[n], sizeof states[n]) == 0;
    snprintf(states[n++], sizeof states[0], "%s", def.state);
    /* root's own configuration is the system's */
    if (strcmp(mine, "/etc/vram/vram.conf") != 0)
        n += config_state_of("/etc/vram/vram.conf", states[n], sizeof states[n]) == 0;
    snprintf(states[n++], sizeof states[0], "/var/lib/vram/vram.db");
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t k = 0; k < i; k++)
            seen |= !strcmp(states[k], states[i]);
        if (!seen && states[i][0])
            read_state(states[i], s);
    }
}

static const struct main_proc *model_of(const struct served *s, const struct snap_proc *p)
{
    for (size_t k = 0; k < s->n; k++)
        if (s->v[k].pid == p->pid)
            return &s->v[k];
    char cg[256];
    if (cgroup_of(p->pid, cg, sizeof cg) == 0)
        for (size_t k = 0; k < s->n; k++)
            if (s->v[k].cgroup[0] && !strcmp(s->v[k].cgroup, cg))
                return &s->v[k];
    uint32_t uid;
    pid_t main = family_main_of((pid_t)p->pid);
    if (main > 0 && hostproc_uid(p->pid, &uid) == 0)
        for (size_t k = 0; k < s->n; k++)
            if (s->v[k].pid == (uint32_t)main && s->v[k].uid == uid)
                return &s->v[k];
    return NULL;
}

size_t served_mark(struct snap *snap)
{
    return served_mark_mains(snap, NULL, 0, NULL);
}

size_t served_mark_mains(struct snap *snap, struct served_main *out, size_t max, size_t *nout)
{
    size_t procs = 0;
    for (size_t g = 0; g < snap->ngpus; g++)
        procs += snap->gpus[g].nprocs;
    if (nout)
        *nout = 0;
    /* nothing to mark, nobody asking for the models: no state to read
     * (a daemon's SQLite file, its configuration) */
    if (!procs && !nout)
        return 0;
    struct served *s = calloc(1, sizeof *s);
    if (!s)
        return 0;
    find_mains(s);
    for (size_t k = 0; k < s->n && nout && *nout < max; k++, (*nout)++) {
        out[*nout].pid = s->v[k].pid;
        snprintf(out[*nout].model, sizeof out[*nout].model, "%s", s->v[k].name);
    }
    size_t marked = 0;
    for (size_t g = 0; g < snap->ngpus; g++)
        for (size_t i = 0; i < snap->gpus[g].nprocs; i++) {
            struct snap_proc *p = &snap->gpus[g].procs[i];
            const struct main_proc *m = s->n ? model_of(s, p) : NULL;
            snprintf(p->model, sizeof p->model, "%s", m ? m->name : "");
            marked += m != NULL;
        }
    free(s);
    return marked;
}

