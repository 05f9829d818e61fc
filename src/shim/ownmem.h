/* ownmem: the device memory libvramcap makes itself under fast swap, so
 * that a suspend can move it and a resume bring it back at the same
 * addresses: a cuMemAlloc's (mem.c), and the chunks of libvramcap's
 * memory pools (arena.c). Each is one physical allocation of the VMM,
 * mapped whole in an address range of its own, recorded in the swap
 * table as libvramcap's (own), and reachable from its own device and from
 * the devices whose contexts enabled peer access to it (reach.h). */
#ifndef VRAM_SHIM_OWNMEM_H
#define VRAM_SHIM_OWNMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shim/driver.h"

/* A cuMemAlloc / cuMemFree made of VMM calls. Where the driver has no VMM,
 * a plain allocation, and *plain says so. */
CUresult ownmem_alloc(CUdeviceptr *dptr, size_t size, bool *plain);
CUresult ownmem_free(CUdeviceptr dptr);

/* A chunk of a memory pool (ownpool.c): the same movable memory, on device
 * dev whatever context is current, also reachable from the devices in
 * access (bit = CUdevice); its range and size (rounded up) out. No
 * cuMemFree takes it: ownmem_chunk_free does. */
CUresult ownmem_chunk(int dev, size_t size, uint64_t access, CUdeviceptr *dptr, uint64_t *got);
void ownmem_chunk_free(CUdeviceptr dptr);
/* Who may reach a chunk besides its own device (cuMemPoolSetAccess), now
 * and after every resume. */
CUresult ownmem_chunk_access(CUdeviceptr dptr, uint64_t readers, uint64_t writers);

#endif
