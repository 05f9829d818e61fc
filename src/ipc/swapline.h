/* swapline: the one-line protocol between `vram` (suspend, resume, the
 * daemon) and the fast swap inside a process running under libvramcap
 * with VRAM_SWAP=1, on the abstract Unix socket "vram-swap-PID" (or, when
 * another process squats that name, "vram-swap-PID.NONCE"). Both ends
 * build and read it here, so the two cannot drift apart.
 *   request:  info | suspend [TIMEOUT_MS [OFF LEN]...] | resume [FLOOR] | prepare
 *             (OFF LEN...: the window of the daemon's host pool to swap into,
 *             up to SWAPLINE_MAX_EXTENTS pieces of it, filled in order;
 *             FLOOR: another process is moving off the GPU now: wait for
 *             room rather than fail, and leave FLOOR bytes free)
 *   answer:   ok KEY=VALUE ... [why=TEXT TO THE END]  |  error MESSAGE */
#ifndef VRAM_IPC_SWAPLINE_H
#define VRAM_IPC_SWAPLINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

struct swapline_info {
    char state[16]; /* running, suspended */
    char policy[8]; /* keep, none, eager */
    uint64_t bytes; /* swappable GPU memory */
    uint64_t pool;  /* pinned host memory held */
    unsigned allocations;
    uint64_t gate_ms, sync_ms, pool_ms, copy_ms;
    char why[200]; /* why it cannot be swapped fast; empty when it can */
};

/* A window of the daemon's host pool: pieces of its memfd, which the
 * process fills in this order as if they were one range. Pieces let a
 * window use the free space of a fragmented pool (models of the same size
 * leave holes of that size; one that grew fits none of them whole). */
#define SWAPLINE_MAX_EXTENTS 8

struct swapline_window {
    unsigned n;
    struct swapline_extent {
        uint64_t off, len;
    } e[SWAPLINE_MAX_EXTENTS];
};

/* The window's bytes, all pieces together. */
uint64_t swapline_window_len(const struct swapline_window *w);

/* Bytes [from, from + len) of w, as a window of their own (fewer bytes when
 * w ends first). */
void swapline_window_part(const struct swapline_window *w, uint64_t from, uint64_t len,
                          struct swapline_window *out);

enum swapline_verb { SWAPLINE_INFO, SWAPLINE_SUSPEND, SWAPLINE_RESUME, SWAPLINE_PREPARE };

struct swapline_req {
    enum swapline_verb verb;
    unsigned timeout_ms;         /* suspend: how long to wait for calls in flight; 0: default */
    struct swapline_window pool; /* suspend: the pool window; no pieces: none */
    uint64_t floor;              /* resume: overlapped, leaving this much free; 0: not */
};

/* The request line for q, without its newline; its length, or -1. */
int swapline_format_request(const struct swapline_req *q, char *out, size_t len);

/* Reads a request line (without its newline): 0, or -1 when it is none. */
int swapline_parse_request(const char *line, struct swapline_req *q);

#define SWAPLINE_NAME "vram-swap-"
/* The daemon's host pool is a memfd of this name. It reaches a model's
 * process inherited (VRAM_SWAP_POOL_FD) or, where a parent closed that
 * descriptor (Python's multiprocessing and subprocess do), passed along
 * (SCM_RIGHTS) with the daemon's suspend request. */
#define SWAPLINE_POOL_NAME "vram-host-pool"

/* The socket address of pid's control thread. */
socklen_t swapline_address(int pid, struct sockaddr_un *a);

/* Where it listens when another process took that name first (anyone may
 * bind any abstract name): "vram-swap-PID.NONCE", NONCE random. The client
 * finds it among the sockets pid itself holds (park/swapctl.c). */
socklen_t swapline_address_alt(int pid, uint64_t nonce, struct sockaddr_un *a);

/* The "ok ..." answer for info, newline included; its length, or -1 when
 * out is too small. */
int swapline_format(const struct swapline_info *info, char *out, size_t len);

/* Parses an answer's text after "ok" (key=value words, then " why=..."
 * to the end) into *info; unknown words are skipped. line is changed. */
void swapline_parse(char *line, struct swapline_info *info);

#endif
