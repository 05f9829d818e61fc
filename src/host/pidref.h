/* pidref: a process named by its pid, held by a pidfd where the kernel has
 * them, so that what vram checks about it (may this user act on it?) is
 * about the process it then acts on, and not another that took the pid
 * after the first exited. */
#ifndef VRAM_HOST_PIDREF_H
#define VRAM_HOST_PIDREF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pidref {
    int pid;
    int fd;         /* the pidfd, -1 where the kernel has none (before 5.3) */
    uint64_t start; /* start time in clock ticks (host/proc.h), the check without a pidfd */
};

/* Holds pid, and checks that the caller may act on it as kill(2) would
 * let it signal it: root, or the process's own user. 0, or -1 with err
 * (no such process; another user's, named, with what to do). */
int pidref_open(struct pidref *r, int pid, char *err, size_t len);

/* Whether r still is the process pidref_open checked: running, and its
 * pid not taken by another. */
bool pidref_same(const struct pidref *r);

/* Holds pid as it is now, without asking whether the caller may signal
 * it: 0, or -1 when there is no such process. */
int pidref_hold(struct pidref *r, int pid);

/* sig to the process held, never to another that took its pid since: 0,
 * or -1 with errno (ESRCH: it exited). */
int pidref_kill(const struct pidref *r, int sig);

/* Ends the process held, as vram reclaim ends one: TERM (and CONT when it
 * is stopped: it sees TERM only once it runs), up to grace seconds for it
 * to exit, then KILL. True when it was gone before the KILL. */
bool pidref_end(const struct pidref *r, bool stopped, double grace);

void pidref_close(struct pidref *r);

#endif
