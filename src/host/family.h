/* family: every process of one model of `vram serve`, whatever its command
 * started: a server that forks workers, a wrapper that puts its child in a
 * session of its own (setsid), children orphaned when their parent died.
 * Where cgroup v2 lets the daemon make one, each model gets a cgroup of its
 * own (vram-PID under the daemon's, PID its main process: a name no other
 * daemon's model can share); and always, every process of a
 * model carries VRAM_MODEL_PID=<its main pid> in its environment, which
 * children inherit. A signal to the family goes to both, and to the main
 * process's group. */
#ifndef VRAM_HOST_FAMILY_H
#define VRAM_HOST_FAMILY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define FAMILY_ENV "VRAM_MODEL_PID"

/* Before the fork: the folder the model's cgroup goes in (the daemon's own
 * cgroup) into base, with room after it for the child to name its own;
 * "" when cgroup v2 is not there or not ours to write. */
void family_prepare(char *base, size_t len);

/* In the child, between fork and exec (async-signal-safe): makes and joins
 * BASE/vram-PID (base "": none), and writes its own pid into the digits of
 * the environment entry tag ("VRAM_MODEL_PID=" followed by room for 10
 * digits). base is changed. */
void family_join(char *base, size_t len, char *tag);

/* sig to every process of the model whose main process is pid (alive or
 * gone): its cgroup's, those tagged with it, its group; only processes of
 * uid. How many were signalled. */
unsigned family_signal(pid_t pid, uid_t uid, int sig);

/* The main pid of the model family pid belongs to (its VRAM_MODEL_PID),
 * or 0. */
pid_t family_main_of(pid_t pid);

/* Removes the cgroup of the model whose main process was pid, once it is
 * empty (quietly otherwise). */
void family_forget(pid_t pid);

/* Removes the empty cgroups of models whose main process is none of
 * live[n]: those whose last processes were still dying when they ended. */
void family_sweep(const pid_t *live, size_t n);

#endif
