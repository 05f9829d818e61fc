/* ctl: the fast-swap control thread of a process under libvramcap with
 * VRAM_SWAP=1, answering `vram` on the abstract socket "vram-swap-PID"
 * (the line is ipc/swapline.h). */
#ifndef VRAM_SHIM_CTL_H
#define VRAM_SHIM_CTL_H

/* Starts the control socket once the process has a context. */
void ctl_start(void);

/* In a forked child: the parent's socket and thread are not its own. */
void ctl_after_fork(void);

#endif
