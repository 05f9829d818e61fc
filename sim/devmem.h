/* devmem: the simulated card's memory as the process holds it: pages, and
 * their page-table entries, that a free or an unmap keeps (poisoned where
 * they held data) for the next allocation or mapping, as a GPU's memory
 * stays where it is. Thread-safe. */
#ifndef VRAM_SIM_DEVMEM_H
#define VRAM_SIM_DEVMEM_H

#include <stdbool.h>
#include <stddef.h>

/* size bytes of private memory for a linear allocation: a kept block of
 * that size, else a new unbacked mapping. NULL if none can be made. */
void *simdevmem_map(size_t size);
/* Gives back what simdevmem_map gave. */
void simdevmem_unmap(void *p, size_t size);

/* A memfd of size bytes for a physical allocation (cuMemCreate) on device
 * dev: a kept one of that device, else a new one, named
 * "vram-sim-vmm-dDEV" (the device travels with an exported descriptor);
 * -1 with errno if none can be made. */
int simdevmem_fd(size_t size, int dev);
/* Gives back what simdevmem_fd gave, mapped nowhere now but where it is
 * parked. */
void simdevmem_fd_release(int fd, size_t size, int dev);
/* Closes a memfd another process may map (exported or imported): never
 * kept, its parks forgotten. */
void simdevmem_fd_close(int fd);

/* fd, mapped whole at [addr, addr+size), is being unmapped: the mapping
 * stays, inaccessible, as the reservation the range goes back to. false
 * when it cannot: the caller makes the reservation itself. */
bool simdevmem_park(int fd, void *addr, size_t size);
/* The caller replaces or frees [addr, addr+size): what is parked there is
 * forgotten. */
void simdevmem_unpark(void *addr, size_t size);
/* *fd is to be mapped whole at [addr, addr+size): true when it was parked
 * there and is now accessible again (its pages in place). With swap (*fd
 * holds nothing its allocation's owner wrote: never mapped), a kept memfd
 * of the same size and device parked there may take its place: *fd changes. false:
 * the caller maps it (after simdevmem_unpark). */
bool simdevmem_place(int *fd, bool swap, int dev, void *addr, size_t size);

#endif
