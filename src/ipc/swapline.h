/* swapline: the one-line protocol between `vram` (suspend, resume, the
 * daemon) and the fast swap inside a process running under libvramcap
 * with VRAM_SWAP=1, on the abstract Unix socket "vram-swap-PID" (or, when
 * another process squats that name, "vram-swap-PID.NONCE"). Both ends
 * build and read it here, so the two cannot drift apart.
 *   request:  info | suspend [TIMEOUT_MS [SPILL]] | resume [FLOOR [KEEP]] | prepare | drop
 *             | spill [SPILL [BYTES]]
 *             (FLOOR: another process is moving off the GPU now: wait for
 *             room rather than fail, and leave FLOOR bytes free; KEEP 1:
 *             keep the daemon's chunks pinned after the resume, ready for
 *             the next suspend, instead of giving them back)
 *   answer:   ok KEY=VALUE ... [why=TEXT TO THE END]  |  error MESSAGE
 * Under the daemon, host memory travels beside the line: `prepare` and
 * `suspend` may carry chunks of it (memfds the daemon made for this model
 * alone, SCM_RIGHTS, up to SWAPLINE_MAX_CHUNKS). `prepare` pins them ahead
 * of the next suspend; a suspend fills the prepared chunks, then its own,
 * in order; `drop` gives prepared chunks back. The chunks of one model are
 * never another's: the only pinned memory a model can reach is its own.
 * The disk tier: SPILL > 0 says the last descriptor passed is a file of
 * the daemon's spill folder, made for this model alone, where up to SPILL
 * bytes that its chunks cannot hold go (a suspend), or where what its
 * chunks hold goes before they are given back (`spill`, to a suspended
 * process; SPILL 0, to the file it holds already; BYTES > 0: only its last
 * chunks, at least that many bytes of them). The answer's disk=BYTES says
 * what the file holds, held= what its chunks still hold. */
#ifndef VRAM_IPC_SWAPLINE_H
#define VRAM_IPC_SWAPLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

struct swapline_info {
    char state[16]; /* running, suspended */
    char policy[8]; /* keep, none, eager */
    uint64_t bytes; /* swappable GPU memory */
    uint64_t pool;  /* pinned host memory held of its own */
    uint64_t held;  /* chunks of the daemon's host memory it holds */
    unsigned allocations;
    uint64_t gate_ms, sync_ms, pool_ms, copy_ms;
    uint64_t disk;    /* bytes in the daemon's spill file (the disk tier) */
    uint64_t disk_ms; /* the spill file's part of the move */
    char why[200]; /* why fast swap cannot move it; empty when it can */
};

/* The most chunks of host memory one request carries. */
#define SWAPLINE_MAX_CHUNKS 64

enum swapline_verb {
    SWAPLINE_INFO,
    SWAPLINE_SUSPEND,
    SWAPLINE_RESUME,
    SWAPLINE_PREPARE,
    SWAPLINE_DROP,
    SWAPLINE_SPILL
};

struct swapline_req {
    enum swapline_verb verb;
    unsigned timeout_ms; /* suspend: how long to wait for calls in flight; 0: default */
    uint64_t floor;      /* resume: overlapped, leaving this much free; 0: not */
    bool keep;           /* resume: keep the daemon's chunks, ready for the next suspend */
    uint64_t spill;      /* suspend, spill: the last descriptor is a spill file for this much */
    uint64_t spill_bytes; /* spill: at least this much of its chunks goes down; 0: all */
};

/* The request line for q, without its newline; its length, or -1. */
int swapline_format_request(const struct swapline_req *q, char *out, size_t len);

/* Reads a request line (without its newline): 0, or -1 when it is none. */
int swapline_parse_request(const char *line, struct swapline_req *q);

#define SWAPLINE_NAME "vram-swap-"
/* The daemon's chunks of host memory are memfds of this name. */
#define SWAPLINE_CHUNK_NAME "vram-host-chunk"

/* The socket address of pid's control thread. */
socklen_t swapline_address(int pid, struct sockaddr_un *a);

/* Where it listens when another process took that name first (anyone may
 * bind any abstract name): "vram-swap-PID.NONCE", NONCE random. The client
 * finds it among the sockets pid itself holds (move/swapctl.c). */
socklen_t swapline_address_alt(int pid, uint64_t nonce, struct sockaddr_un *a);

/* The "ok ..." answer for info, newline included; its length, or -1 when
 * out is too small. */
int swapline_format(const struct swapline_info *info, char *out, size_t len);

/* Parses an answer's text after "ok" (key=value words, then " why=..."
 * to the end) into *info; unknown words are skipped. line is changed. */
void swapline_parse(char *line, struct swapline_info *info);

#endif
