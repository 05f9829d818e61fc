/* beneath: opening a path beneath a folder so that nothing outside it is
 * ever reached: ".." never climbs above it, links are followed only while
 * they stay beneath it (or not at all), and only regular files are opened
 * as files. Model stores read through it (model/storepath.c), and `vram
 * headless --root` writes through it (host/rootfs.c). */
#ifndef VRAM_HOST_BENEATH_H
#define VRAM_HOST_BENEATH_H

#include <sys/types.h>

enum {
    BENEATH_DIR = 1,   /* open a folder (for listing, or to act in), else a regular file */
    BENEATH_LINKS = 2, /* follow relative links that stay beneath; else refuse any link */
};

/* Opens path ('/'-separated, relative) beneath the folder root (a
 * descriptor, not consumed). The descriptor, or -1 with errno: EXDEV (it
 * would leave the root: an absolute link, or ".." above it), ELOOP (a link
 * without BENEATH_LINKS, *kind S_IFLNK; or more than 40 links), EINVAL
 * with *kind set to its type (a FIFO, a device, a socket, a folder where a
 * file was asked for: never opened), or what openat says. */
int beneath_open(int root, const char *path, int flags, mode_t *kind);

#endif
