/* display: what a Linux root says about its display hardware and display
 * servers, for `vram headless`: the DRM cards under sys/class/drm, the
 * display server processes under proc and the GPU each holds, and whether
 * etc/X11/xorg.conf selects the nvidia driver. root is "/" or a fixture
 * tree with the same layout. */
#ifndef VRAM_HOST_DISPLAY_H
#define VRAM_HOST_DISPLAY_H

#include "core/headless.h"

/* Fills sys. Returns 0, or -1 when root has no sys/class/drm (not Linux, or
 * not a root). */
int display_scan(const char *root, struct hl_system *sys);

#endif
