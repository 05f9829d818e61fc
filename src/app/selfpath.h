/* selfpath: files that ship with the vram binary (the preload library and
 * the other files of its library folder, the example machines), found in
 * the build tree or the installed tree. */
#ifndef VRAM_APP_SELFPATH_H
#define VRAM_APP_SELFPATH_H

#include <stddef.h>

/* The real path of the first of rel[] (relative to the binary's folder)
 * that exists, into out; -1 if none does. */
int selfpath_find(const char *const *rel, size_t n, char *out, size_t len);

/* The real path of a file of vram's library folder (libvramcap.so, or a
 * path below it): next to the binary (a build tree), else meson's
 * libdir/vram, found from the binary's folder, then at the path the build
 * was configured for. 0, or -1 if it is in none of them. */
int selfpath_lib(const char *name, char *out, size_t len);

/* The same for a file of vram's data folder (examples/workstation.json):
 * next to the binary, else datadir/vram. */
int selfpath_data(const char *name, char *out, size_t len);

/* Where libvramcap.so is, for `vram run` and `vram serve` alike: $VRAM_SHIM
 * when set, else next to the binary (a build tree), else the installed
 * tree (meson's libdir/vram, found from the binary's folder, then at the
 * path the build was configured for). Returns 0, or -1 with err naming
 * every place looked and the fix. */
int selfpath_libvramcap(char *out, size_t len, char *err, size_t errlen);

#endif
