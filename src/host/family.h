/* family: every process of one model of `vram serve`, whatever its command
 * started: a server that forks workers, a wrapper that puts its child in a
 * session of its own (setsid), children orphaned when their parent died.
 * Where cgroup v2 lets the daemon make one, each model gets a cgroup of its
 * own (named after it, under the daemon's); and always, every process of a
 * model carries VRAM_MODEL_PID=<its main pid> in its environment, which
 * children inherit. A signal to the family goes to both, and to the main
 * process's group. */
#ifndef VRAM_HOST_FAMILY_H
#define VRAM_HOST_FAMILY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define FAMILY_ENV "VRAM_MODEL_PID"

/* Before the fork: the cgroup.procs file of a cgroup of name's own, made
 * if need be, into out; "" when cgroup v2 is not there or not ours to
 * write. 0, or -1 with err when it exists but cannot be made. */
int family_prepare(const char *name, char *out, size_t len, char *err, size_t errlen);

/* In the child, between fork and exec (async-signal-safe): joins the
 * cgroup prepared (procs "" : nothing), and writes its own pid into the
 * digits of the environment entry tag ("VRAM_MODEL_PID=" followed by room
 * for 10 digits). */
void family_join(const char *procs, char *tag);

/* sig to every process of the model whose main process is pid (alive or
 * gone) and, with cgroups, named name; only processes of uid. How many
 * were signalled. */
unsigned family_signal(const char *name, pid_t pid, uid_t uid, int sig);

/* The main pid of the model family pid belongs to (its VRAM_MODEL_PID),
 * or 0. */
pid_t family_main_of(pid_t pid);

/* Removes name's cgroup once it is empty (quietly otherwise). */
void family_forget(const char *name);

#endif
