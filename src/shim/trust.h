/* trust: whom libvramcap's control socket obeys, and which memory it maps
 * for fast swap. A process that vram serve started (VRAM_DAEMON=PID:START)
 * obeys that daemon, by pid and start time, and root; it takes chunks of
 * host memory only with their requests, and only the daemon's memfds
 * (their name and seals); and it is not dumpable, so that no other
 * process of its user (another model) may read or write its memory, open
 * its descriptors or trace it. Any other process under libvramcap (vram
 * run, a preload by hand) obeys its own user and root, as kill(2) would. */
#ifndef VRAM_SHIM_TRUST_H
#define VRAM_SHIM_TRUST_H

#include <stdbool.h>
#include <stddef.h>

/* At load, first: reads VRAM_DAEMON; under a daemon, the process becomes
 * undumpable (prctl PR_SET_DUMPABLE 0). */
void trust_init(void);

/* Whether this process runs under vram serve. */
bool trust_by_daemon(void);

/* Whether the peer of the accepted connection fd may ask anything of
 * this process; if not, why (for its answer) in why. */
bool trust_peer(int fd, char *why, size_t len);

/* Whether fd is a chunk of the daemon's host memory: a memfd of its name
 * (ipc/swapline.h), its size sealed. 0, or -1 with err. */
int trust_chunk(int fd, char *err, size_t len);

#endif
