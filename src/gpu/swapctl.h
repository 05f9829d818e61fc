/* swapctl: talking to the fast swap inside a process running under
 * libvramcap with VRAM_SWAP=1 (src/shim/ctl.c is the other end): one
 * request line, one answer line, on the abstract socket "vram-swap-PID". */
#ifndef VRAM_GPU_SWAPCTL_H
#define VRAM_GPU_SWAPCTL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

struct swapctl_info {
    char state[16]; /* running, suspended */
    char policy[8]; /* keep, none, eager */
    uint64_t bytes; /* swappable GPU memory */
    uint64_t pool;  /* pinned host memory held */
    unsigned allocations;
    uint64_t gate_ms, sync_ms, pool_ms, copy_ms;
    char why[200]; /* why it cannot be swapped fast; empty when it can */
};

/* The socket address of pid's control thread. */
socklen_t swapctl_address(int pid, struct sockaddr_un *a);

/* Parses an answer's text after "ok" (key=value words, then " why=..."
 * to the end) into *info; unknown words are skipped. line is changed. */
void swapctl_parse(char *line, struct swapctl_info *info);

/* Sends req (info, suspend [MS], resume, prepare) to pid and parses the
 * answer. 1 with *info on "ok"; 0 when pid has no fast swap (nobody
 * listens for it); -1 with err: the process's own message, or why it
 * could not be asked. */
int swapctl_call(int pid, const char *req, unsigned timeout_ms, struct swapctl_info *info,
                 char *err, size_t len);

#endif
