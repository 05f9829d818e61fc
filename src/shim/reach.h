/* reach: who may reach fast swap's memory. With fast swap on, cuMemAlloc's
 * memory is VMM memory (ownmem.h), which cuCtxEnablePeerAccess does not
 * open to other GPUs the way it opens the driver's own: libvramcap keeps
 * which devices' contexts enabled peer access to which devices' memory
 * (peer.c tells it), and grants them (cuMemSetAccess) each of its
 * allocations on those devices, now and as they are made. The access
 * every physical allocation was given, by libvramcap or by the
 * application, is recorded on its swap table entry, so that a resume
 * grants exactly that again. The swap table is locked for all of these. */
#ifndef VRAM_SHIM_REACH_H
#define VRAM_SHIM_REACH_H

#include <stdbool.h>
#include <stddef.h>

#include "shim/driver.h"
#include "shim/swaptable.h"

/* The application gave access (cuMemSetAccess succeeded): recorded on
 * every entry mapped in [ptr, ptr+size). */
void reach_note(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count);

/* A new allocation of libvramcap's on its own device: reachable from that
 * device and from every device whose contexts enabled peer access to it.
 * Sets p's access; reach_grant gives it. */
void reach_own(struct swaptable_entry *p);

/* Grants p, mapped at p->va, the access it records, in one driver call;
 * its own device always, which copies back need. */
CUresult reach_grant(const struct swaptable_entry *p);

/* Whether device from's contexts reach device to's memory. */
bool reach_has(int from, int to);

/* Opens (or closes) from's access to every allocation of libvramcap's on
 * to, mapped or swapped out (a resume grants what is recorded). The first
 * error, after trying them all. */
CUresult reach_set(int from, int to, bool open);

#endif
