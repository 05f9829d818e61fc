/* super: the model processes of `vram serve`: starting one on its GPU
 * with its port and log file, signalling it, telling whether it still
 * runs (by pid and start time, so a reused pid is never taken for it). */
#ifndef VRAM_DAEMON_SUPER_H
#define VRAM_DAEMON_SUPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "host/runas.h"

struct super_spawn {
    const char *name;
    const char *command; /* ${PORT} is replaced; PORT is also in the environment */
    const char *logdir;
    const char *gpu_uuid; /* CUDA_VISIBLE_DEVICES */
    unsigned port;
    const char *shim; /* libvramcap.so to preload, or NULL */
    uint64_t cap;     /* its slice; 0: no cap */
    bool fast;        /* fast swap on */
    const char *swap_pool;
    uint64_t swap_host_max; /* the most pinned host memory it may take */
    bool by_daemon;         /* the daemon brings its host memory (VRAM_SWAP_DAEMON) */
    const char *env; /* the model's own KEY=VALUE entries, NUL-terminated, one after another */
    unsigned nenv;
    /* VRAM_CAP_GROUP: its group files (daemon/mgroup.h), charged by all its
     * processes together; NULL: VRAM_CAP, a cap for each process alone */
    const char *cap_group;
    /* the user it runs as (run->on false: the daemon's own) */
    const struct runas *run;
    /* descriptors the command gets as 3, 4, ... (a discovered model's files,
     * daemon/modelfd.h); the only ones it inherits but 0-2 */
    const int *fds;
    unsigned nfds;
};

/* Forks a process for /bin/sh -c "exec COMMAND" in its own session and
 * family (host/family.h), as its user (s->run: with that user's HOME, USER
 * and LOGNAME), stdout and stderr appended to LOGDIR/NAME.log, no other
 * descriptor inherited but s->fds. Under libvramcap it is told which
 * process is its daemon (VRAM_DAEMON=PID:START, shim/trust.h), the one it
 * obeys. It execs only once super_go(*gate) is called: the caller records
 * pid and start first, so that a daemon that dies in between leaves
 * nothing running (the process sees the gate close and exits with
 * SUPER_NOT_RELEASED). */int super_start(const struct super_spawn *s, pid_t *pid, uint64_t *start_ticks, int *gate,
                char *err, size_t len);

/* The exit status of a process whose daemon died before releasing it. */
#define SUPER_NOT_RELEASED 121
/* ... of one that could not become its user, or that user cannot read
 * libvramcap: it ran nothing (its log says which). */
#define SUPER_NO_USER 122

/* Lets the process started with this gate run its command. */
void super_go(int gate);

/* A model's stop command (stop =, llama-swap's cmdStop: docker stop NAME)
 * as the model's user (run), by /bin/sh -c, ${PORT} and ${PID} (the model's main process) filled in
 * and in its environment (PORT, PID, VRAM_MODEL), in a session of its own
 * and outside the model's family (a signal to the model spares it), its
 * output appended to the model's log: its pid, or -1 with err. */
pid_t super_stop_cmd(const char *command, const char *name, const char *logdir, unsigned port,
                     pid_t model, const struct runas *run, char *err, size_t len);

/* sig to every process of the model whose main process is pid, run as
 * uid. */
void super_signal(pid_t pid, uid_t uid, int sig);

/* The process still runs, and is the one started at start_ticks. */
bool super_alive(pid_t pid, uint64_t start_ticks);

/* Where the model's log is: LOGDIR/NAME.log, each '/' of NAME as %2F
 * (core/modelname.h): a name never makes a folder. */
void super_log_path(const char *logdir, const char *name, char *out, size_t len);

/* The last non-empty line of the model's log, for error messages. */
void super_last_log(const char *logdir, const char *name, char *out, size_t len);

/* A TCP port on 127.0.0.1 nobody listens on, from `from` up; 0 if none. */
unsigned super_free_port(unsigned from, const bool *taken, size_t ntaken);

#endif
