/* addrmap: addresses to pointers, for the blocks libvramcap's pools hand out
 * (ownpool.c): a free finds its block in one probe or a few, whatever the
 * number of live allocations (PyTorch holds thousands). Open addressing
 * with linear probing; no lock (the owner's). */
#ifndef VRAM_SHIM_ADDRMAP_H
#define VRAM_SHIM_ADDRMAP_H

#include <stddef.h>
#include <stdint.h>

struct addrmap {
    struct addrmap_slot {
        uint64_t key; /* 0 empty, 1 a deleted slot */
        void *v;
    } * s;
    size_t cap, used; /* used counts live and deleted slots */
};

/* Adds key (not 0 or 1, not present) -> v: 0, or -1 out of memory. */
int addrmap_put(struct addrmap *m, uint64_t key, void *v);

/* The value of key, removed with take; NULL when absent. */
void *addrmap_get(struct addrmap *m, uint64_t key, int take);

/* Forgets everything without freeing (a forked child's copy). */
void addrmap_forget(struct addrmap *m);

#endif
