/* sharewire: GPU memory one process under libvramcap shares with another
 * by CUDA IPC while fast swap is on (shim/share.c): the 64 bytes of a
 * cuIpcGetMemHandle handle, and the messages the two libvramcaps exchange
 * on the exporter's socket (SOCK_SEQPACKET, abstract name
 * "vram-ipc-PID.NONCE", NONCE random and part of the handle). Both ends
 * build and read them here.
 *   importer -> exporter: OPEN id token flags      (flags: it can be held)
 *   exporter -> importer: OK id size + descriptor | AWAY id (out right now,
 *                         or busy: try again) | NOPE id (no such export)
 *   exporter -> importer: DETACH id                (it leaves the GPU: let go)
 *   importer -> exporter: DETACHED id | BUSY id    (could not be held)
 *   exporter -> importer: BACK id size + descriptor (here again: map it)
 * Every field has a fixed place; a message is exactly SHAREWIRE_MSG_LEN
 * bytes. */
#ifndef VRAM_IPC_SHAREWIRE_H
#define VRAM_IPC_SHAREWIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#define SHAREWIRE_HANDLE_LEN 64
#define SHAREWIRE_TOKEN_LEN  16
#define SHAREWIRE_MSG_LEN    40
#define SHAREWIRE_NAME       "vram-ipc-"

struct sharewire_handle {
    int32_t pid;    /* the exporter */
    uint32_t dev;   /* the memory's device, as the exporter numbers it */
    uint64_t nonce; /* its socket's name */
    uint64_t id;    /* the allocation, as the exporter knows it */
    uint64_t size;
    uint8_t token[SHAREWIRE_TOKEN_LEN]; /* whoever has the handle may open it */
};

enum sharewire_kind {
    SHAREWIRE_OPEN = 1,
    SHAREWIRE_OK,
    SHAREWIRE_AWAY,
    SHAREWIRE_NOPE,
    SHAREWIRE_DETACH,
    SHAREWIRE_DETACHED,
    SHAREWIRE_BACK,
    SHAREWIRE_BUSY,
};

#define SHAREWIRE_HOLDABLE 1u /* OPEN: the importer runs with fast swap, so it can be held */

struct sharewire_msg {
    enum sharewire_kind kind;
    uint32_t flags;
    uint64_t id, size;
    uint8_t token[SHAREWIRE_TOKEN_LEN];
};

void sharewire_handle_pack(const struct sharewire_handle *h,
                           unsigned char out[SHAREWIRE_HANDLE_LEN]);
/* 0, or -1 when the bytes are no handle of ours (the driver's own, say). */
int sharewire_handle_parse(const unsigned char in[SHAREWIRE_HANDLE_LEN],
                           struct sharewire_handle *h);

void sharewire_msg_pack(const struct sharewire_msg *m, unsigned char out[SHAREWIRE_MSG_LEN]);
/* 0, or -1 for anything but one well-formed message. */
int sharewire_msg_parse(const unsigned char *in, size_t len, struct sharewire_msg *m);

/* The exporter's socket. */
socklen_t sharewire_address(int pid, uint64_t nonce, struct sockaddr_un *a);

#endif
