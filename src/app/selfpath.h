/* selfpath: files that ship next to the vram binary (the preload library,
 * the simulated driver), found in the build tree or the installed tree. */
#ifndef VRAM_APP_SELFPATH_H
#define VRAM_APP_SELFPATH_H

#include <stddef.h>

/* The real path of the first of rel[] (relative to the binary's folder)
 * that exists, into out; -1 if none does. */
int selfpath_find(const char *const *rel, size_t n, char *out, size_t len);

#endif
