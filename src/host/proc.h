/* proc: what the OS knows of a process (user, command, state, parent, start
 * time, container), read from a /proc tree (the real one, or a fixture). */
#ifndef VRAM_HOST_PROC_H
#define VRAM_HOST_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/snapshot.h"

struct hostproc_uidname {
    uint32_t uid;
    char name[SNAP_USER_MAX];
};

/* Per-sample context: where /proc is, the boot time, a small user-name cache. */
struct hostproc_ctx {
    char root[256];
    uint64_t btime;
    long hz;
    long page; /* bytes a page, for resident memory */
    struct hostproc_uidname users[32];
    size_t nusers;
};

void hostproc_init(struct hostproc_ctx *c, const char *root);

/* Fills the host fields of p (name, user, uid, cmdline, state, ppid,
 * start_time, container, rss, cpu_ms) for p->pid. Returns -1, leaving them empty, when the
 * process is not there (it exited, or lives in another PID namespace). */
int hostproc_fill(struct hostproc_ctx *c, struct snap_proc *p);

/* Parses the text of /proc/PID/stat: the name between the first '(' and the
 * last ')' (names may hold both), then the state letter, the parent and the
 * start time in clock ticks after boot. Returns 0 or -1. */
int hostproc_parse_stat(const char *buf, size_t len, char *comm, size_t commlen, char *state,
                        uint32_t *ppid, uint64_t *start_ticks);

/* What /proc/PID/stat says after the name: the state letter, the parent,
 * user and system CPU time and the start in clock ticks, resident memory in
 * pages (rss_known: the line goes that far). */
struct hostproc_stat {
    char state;
    uint32_t ppid;
    uint64_t utime, stime, start_ticks;
    uint64_t rss_pages;
    bool rss_known;
};

/* hostproc_parse_stat's fields and more, into st. 0 or -1. */
int hostproc_parse_stat_all(const char *buf, size_t len, char *comm, size_t commlen,
                            struct hostproc_stat *st);

/* What the details of one process need beyond its snapshot fields: the
 * whole command line (made safe to print) and its cgroup's path; each ""
 * when unreadable. -1 when the process is not there. */
int hostproc_detail(const struct hostproc_ctx *c, uint32_t pid, char *cmdline, size_t cmdlen,
                    char *cgroup, size_t cglen);

/* A live process's start time in clock ticks after boot, from
 * /proc/PID/stat; 0 when the pid is gone or a zombie whose threads have all
 * exited (the driver has taken its GPU memory back). A "defunct" process
 * whose main thread exited while others run still holds its memory, and is
 * alive here. With the pid, it names a process for good: pids are reused,
 * (pid, start) pairs are not. */
uint64_t hostproc_start_ticks(uint32_t pid);

/* The user a live process runs as (the owner of /proc/PID: its effective
 * uid, root for a process that made itself undumpable). 0 or -1. */
int hostproc_uid(uint32_t pid, uint32_t *uid);

/* Whether the environment a process started with holds the entry exactly
 * ("SLURM_JOB_ID=42"), from /proc/PID/environ: readable by root, and by
 * the process's own user while it is dumpable. False when it cannot be
 * read. An environment is the process's own word: a tag, never a proof. */
bool hostproc_environ_has(uint32_t pid, const char *entry);

/* Threads of a process, the exited main thread of a defunct one included. */
int hostproc_threads(uint32_t pid);

/* Processes holding /dev/nvidiaN open: pid and a bit per minor number < 64. */
struct hostproc_holder {
    uint32_t pid;
    uint64_t minors;
};

/* Scans ROOT/[pid]/fd as `fuser -v /dev/nvidia*` would. Processes we may not
 * look into are skipped. Returns the count (caller frees *out) or -1. */
int hostproc_nvidia_holders(const struct hostproc_ctx *c, struct hostproc_holder **out);

#endif
