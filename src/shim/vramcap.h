/* vramcap: libvramcap's start (vramcap.c), run as the library is loaded:
 * the settings read from the environment, once (VRAM_CAP_GROUP, VRAM_CAP,
 * VRAM_SWAP, VRAM_DAEMON: see vramcap.c), each part of the library set
 * up, and what a forked child forgets. Nothing calls it: a program reaches
 * libvramcap through the driver's entry points it wraps (hook.h), and
 * vram reaches it through its environment and fast swap's control socket
 * (ctl.h). */
#ifndef VRAM_SHIM_VRAMCAP_H
#define VRAM_SHIM_VRAMCAP_H

#endif
