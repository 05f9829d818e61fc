/* swapctl: talking to the fast swap inside a process running under
 * libvramcap with VRAM_SWAP=1 (src/shim/ctl.c is the other end): one
 * request line, one answer line, on the abstract socket "vram-swap-PID". */
#ifndef VRAM_MOVE_SWAPCTL_H
#define VRAM_MOVE_SWAPCTL_H

#include <stddef.h>

#include "ipc/swapline.h"

/* Sends req (info, suspend [MS], resume, prepare, drop) to pid and parses the
 * answer. 1 with *info on "ok"; 0 when pid has no fast swap (nobody
 * listens for it); -1 with err: the process's own message, or why it
 * could not be asked. */
int swapctl_call(int pid, const char *req, unsigned timeout_ms, struct swapline_info *info,
                 char *err, size_t len);

/* The same, with n descriptors (at most SWAPLINE_MAX_CHUNKS) sent along
 * with the request: chunks of the daemon's host memory for this process. */
int swapctl_call_fds(int pid, const char *req, const int *fds, unsigned n, unsigned timeout_ms,
                     struct swapline_info *info, char *err, size_t len);

#endif
