/* disktier: the third tier of vram serve, below the GPU and host memory.
 * When host_budget has no room for a suspend, what does not fit goes to a
 * file of the spill folder (`spill =`, by default beside the state), and
 * the least recently used suspended models move down there to make room
 * for the next suspend in host memory. One file per model, made for it
 * alone (0600, no other model can open it: it reaches the model only as a
 * descriptor), removed when the model resumes or stops, and what the files
 * hold together kept within spill_budget. The model's process writes and
 * reads its file itself (shim/spill.h); this owns the folder, the files'
 * names and the accounting. */
#ifndef VRAM_DAEMON_DISKTIER_H
#define VRAM_DAEMON_DISKTIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define DISKTIER_OWNERS 256 /* CONFIG_MAX_MODELS or more */

struct disktier;

/* The spill folder dir, made (0700) when missing; it must be this user's
 * and writable by nobody else. budget 0: what its filesystem has free now,
 * less a margin (a twentieth of the disk, at least 1 GiB). Files a previous
 * daemon left are removed. NULL with err naming the setting and the fix. */
struct disktier *disktier_open(const char *dir, uint64_t budget, char *err, size_t len);

/* The checks of disktier_open, for --check: nothing is made or removed. */
int disktier_check(const char *dir, char *err, size_t len);

void disktier_close(struct disktier *t);

/* A new file for owner (a model named name, whose processes run as uid
 * and gid, -1: the daemon's), for up to want bytes: its descriptor (the
 * caller's to close once sent), and in *max what it may hold (want, or
 * what the budget has left). Reserved against the budget until
 * disktier_set says what it holds. -1 with err: no room, or the file could
 * not be made. */
int disktier_make(struct disktier *t, unsigned owner, const char *name, uid_t uid, gid_t gid,
                  uint64_t want, uint64_t *max, char *err, size_t len);

/* Whether owner has a file now. */
bool disktier_has(const struct disktier *t, unsigned owner);

/* What owner's file holds now: what its process said, or what the file
 * takes on disk if more (measured: a model writes its file itself);
 * returned. A file that holds nothing is removed. */
uint64_t disktier_set(struct disktier *t, unsigned owner, uint64_t bytes);

/* The file removed, its bytes no longer counted (the model resumed or
 * stopped). */
void disktier_remove(struct disktier *t, unsigned owner);

/* What owner's file holds; what all of them hold; the budget. */
uint64_t disktier_held(const struct disktier *t, unsigned owner);
uint64_t disktier_used(const struct disktier *t);
uint64_t disktier_budget(const struct disktier *t);
const char *disktier_dir(const struct disktier *t);

#endif
