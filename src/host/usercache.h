/* usercache: small files vram keeps for the user who runs it, to skip
 * slow work next time ($XDG_CACHE_HOME/vram, else ~/.cache/vram): only in
 * a folder that is this user's own and no one else may write, so that no
 * other party's file is ever read as ours. */
#ifndef VRAM_HOST_USERCACHE_H
#define VRAM_HOST_USERCACHE_H

#include <stddef.h>

/* The text of the cache file name (a plain name) into buf, NUL ended: its
 * length, or -1 when there is none to trust (no folder, not ours, too
 * long, not a regular file of ours). */
long usercache_read(const char *name, char *buf, size_t len);

/* Replaces the cache file name with text (written beside it, then renamed
 * over it), making the folders (0700) that are missing under one of ours.
 * 0, or -1 when there is no folder of ours to write in: the cache is a
 * saving, never needed. */
int usercache_write(const char *name, const char *text);

#endif
