/* hostpool: the host memory fast swap copies into under the daemon, as
 * chunks: memfds the daemon makes and populates, each given to one model
 * only (sent with its suspend or its prepare request, ipc/swapline.h) and
 * never to another: a model can reach no host memory but its own. A spare
 * of populated chunks is kept ready for the next suspend (so that it pays
 * no page faults); a model's chunks come back when it resumes, exits or is
 * told to drop what it prepared. Threads of the pool's own populate new
 * chunks and free returned ones: page faults and page frees of gigabytes
 * take tenths of seconds, never on the loop. */
#ifndef VRAM_DAEMON_HOSTPOOL_H
#define VRAM_DAEMON_HOSTPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HOSTPOOL_MIN_CHUNK (32ULL << 20)
#define HOSTPOOL_OWNERS    256 /* CONFIG_MAX_MODELS or more */

struct hostpool;

/* A pool of at most limit bytes of chunks at once, chunk bytes each (the
 * next power of two over share / 48, at least HOSTPOOL_MIN_CHUNK: a share
 * in few enough chunks to send in one request). NULL with err. */
struct hostpool *hostpool_open(uint64_t limit, uint64_t share, char *err, size_t len);

/* The largest share is now share: chunks made from now on are sized for
 * it (a share in at most 48). */
void hostpool_set_chunk(struct hostpool *p, uint64_t share);

/* Stops its threads and closes every chunk (the models' mappings live on). */
void hostpool_close(struct hostpool *p);

/* How many bytes of populated chunks to keep ready, given to nobody. */
void hostpool_set_spare(struct hostpool *p, uint64_t bytes);

/* Chunks for owner covering bytes: populated spares first, then new ones
 * (whose pages the model's pinning faults in), within the limit and the
 * RAM available, at most max of them (a model makes up what they do not
 * cover from its own memory). Their descriptors (the pool's own: send, do
 * not close) go to fds[*n]. The spare wanted drops by what was taken from
 * it, until hostpool_set_spare says again. 0, or -1 with err and nothing
 * given. */
int hostpool_give(struct hostpool *p, unsigned owner, uint64_t bytes, int *fds, unsigned max,
                  unsigned *n, char *err, size_t len);

/* The same, giving what the limit and the RAM available allow of bytes
 * (perhaps none: 0 with *n = 0): the disk tier takes the rest. */
int hostpool_give_some(struct hostpool *p, unsigned owner, uint64_t bytes, int *fds,
                       unsigned max, unsigned *n, char *err, size_t len);

/* Owner holds bytes of host memory outside the pool's chunks (a model the
 * driver's checkpoint suspended): counted against the limit, the spare
 * giving way, until hostpool_release. 0; -1 with err when the limit has
 * no room for it: then counted only if force (it is held already). */
int hostpool_charge(struct hostpool *p, unsigned owner, uint64_t bytes, bool force, char *err,
                    size_t len);

/* What owner is charged for. */
uint64_t hostpool_charged(const struct hostpool *p, unsigned owner);

/* A new limit (host_budget, lowered while the machine runs short of RAM):
 * what is held over it stays until it is given back. */
void hostpool_set_limit(struct hostpool *p, uint64_t limit);

/* What the limit still has room for past what models hold (and what is
 * being made or freed): the spare counts as room. */
uint64_t hostpool_room(const struct hostpool *p);

/* Bytes of chunks owner holds. */
uint64_t hostpool_given(const struct hostpool *p, unsigned owner);

/* Owner kept only its first bytes of chunks (it reported held=bytes):
 * the rest come back. */
void hostpool_keep(struct hostpool *p, unsigned owner, uint64_t bytes);

/* Every chunk of owner's back, and its charge: its bytes are not needed
 * any more (it resumed, exited, or dropped what it prepared). */
void hostpool_release(struct hostpool *p, unsigned owner);

struct hostpool_stats {
    uint64_t limit, chunk;
    uint64_t spare;   /* populated, given to nobody */
    uint64_t filling; /* being populated */
    uint64_t given;   /* held by models */
    uint64_t freeing; /* returned, being freed */
    uint64_t charged; /* held by models outside chunks (the driver's checkpoint) */
    /* since the pool opened: bytes its threads populated, and freed (what
     * made and freed again over and over costs the machine CPU and memory
     * bandwidth its models could use) */
    uint64_t made, freed;
};

void hostpool_stats(const struct hostpool *p, struct hostpool_stats *s);

#endif
