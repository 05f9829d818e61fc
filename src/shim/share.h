/* share: GPU memory shared between processes by CUDA IPC
 * (cuIpcGetMemHandle / cuIpcOpenMemHandle) while fast swap is on. Fast
 * swap makes every cuMemAlloc of VMM memory, which the driver's IPC
 * handles do not cover; so libvramcap hands out handles of its own
 * (ipc/sharewire.h): the importer's libvramcap asks the exporter's for the
 * memory (a descriptor, cuMemExportToShareableHandle) and maps it. When
 * the exporter is suspended, each importer first lets go of that memory
 * and waits at its gate (its work done); when the exporter comes back it
 * sends the memory again, the importer maps it at the same address and
 * goes on. So the processes of a model move out in any order, each its own
 * memory, and nothing reads or writes memory that is away. An importer
 * that cannot be held (not under VRAM_SWAP=1) keeps the exporter on the
 * driver's path, with the reason. */
#ifndef VRAM_SHIM_SHARE_H
#define VRAM_SHIM_SHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shim/driver.h"

/* cuIpcGetMemHandle of memory libvramcap made (ownmem.h): 1 with *rc
 * (and one of libvramcap's handles in *h when it succeeds), or 0 when ptr
 * is none of its allocations (the driver answers). Fast swap on. */
int share_handle(CUipcMemHandle *h, CUdeviceptr ptr, CUresult *rc);

/* cuIpcOpenMemHandle of one of libvramcap's handles: 1 with *rc (and the
 * address and size when it succeeds), or 0 when h is the driver's own. */
int share_open(CUdeviceptr *dptr, const CUipcMemHandle *h, unsigned flags, uint64_t *size,
               CUresult *rc);

/* cuIpcCloseMemHandle of memory share_open mapped: 1, else 0. */
int share_close(CUdeviceptr p);

/* Why this process's memory cannot leave (an importer that cannot be
 * held), in why; NULL when nothing stops it. Swap table locked. */
const char *share_blocker(char *why, size_t len);

/* A suspend, the gate closed and the work done, the swap table locked:
 * every importer of this process's memory lets go of it and waits. 0, or
 * -1 with err (those that had let go have it again). */
int share_evict(unsigned timeout_ms, char *err, size_t len);

/* A resume, the memory back, the swap table locked: the importers that
 * let go get it again and go on. */
void share_back(void);

/* The allocation id was freed: its importers keep what they mapped. */
void share_forget(uint64_t id);

/* A forked child shares nothing. */
void share_after_fork(void);

#endif
