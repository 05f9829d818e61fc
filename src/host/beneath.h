/* beneath: opening a path beneath a folder so that nothing outside it is
 * ever reached: ".." never climbs above it, links are followed only while
 * they stay beneath it (or not at all), and only regular files are opened
 * as files. Model stores read through it (model/storepath.c), and `vram
 * headless --root` reads (host/display.c) and writes (host/rootfs.c)
 * through it. */
#ifndef VRAM_HOST_BENEATH_H
#define VRAM_HOST_BENEATH_H

#include <sys/types.h>

enum {
    BENEATH_DIR = 1,   /* open a folder (for listing, or to act in), else a regular file */
    BENEATH_LINKS = 2, /* follow relative links that stay beneath; else refuse any link */
    /* with BENEATH_LINKS: an absolute link starts again from the root, as
     * it would inside that root (a system tree: /sys, /proc, /etc) */
    BENEATH_IN_ROOT = 4,
};

/* Opens path ('/'-separated, relative) beneath the folder root (a
 * descriptor, not consumed). The descriptor, or -1 with errno: EXDEV (it
 * would leave the root: an absolute link, or ".." above it), ELOOP (a link
 * without BENEATH_LINKS, *kind S_IFLNK; or more than 40 links), EINVAL
 * with *kind set to its type (a FIFO, a device, a socket, a folder where a
 * file was asked for: never opened), or what openat says. */
int beneath_open(int root, const char *path, int flags, mode_t *kind);

/* Up to len - 1 bytes of the regular file at path beneath root, with
 * BENEATH_LINKS | BENEATH_IN_ROOT, NUL-terminated: how many, or -1 with
 * errno (nothing but a regular file is ever opened: a FIFO, a device, a
 * terminal a link leads to are refused before any open). */
ssize_t beneath_read_text(int root, const char *path, char *buf, size_t len);

#endif
