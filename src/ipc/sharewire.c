/* sharewire: the handle and messages of CUDA IPC under fast swap. */
#include "ipc/sharewire.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const char magic[8] = {'v', 'r', 'a', 'm', 'i', 'p', 'c', '1'};

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

/* magic 0..7, pid 8..11, dev 12..15, nonce 16..23, id 24..31, size
 * 32..39, token 40..55, zeros to 63 */
void sharewire_handle_pack(const struct sharewire_handle *h,
                           unsigned char out[SHAREWIRE_HANDLE_LEN])
{
    memset(out, 0, SHAREWIRE_HANDLE_LEN);
    memcpy(out, magic, sizeof magic);
    put32(out + 8, (uint32_t)h->pid);
    put32(out + 12, h->dev);
    put64(out + 16, h->nonce);
    put64(out + 24, h->id);
    put64(out + 32, h->size);
    memcpy(out + 40, h->token, SHAREWIRE_TOKEN_LEN);
}

int sharewire_handle_parse(const unsigned char in[SHAREWIRE_HANDLE_LEN], struct sharewire_handle *h)
{
    if (memcmp(in, magic, sizeof magic) != 0)
        return -1;
    for (int i = 56; i < SHAREWIRE_HANDLE_LEN; i++)
        if (in[i])
            return -1;
    h->pid = (int32_t)get32(in + 8);
    h->dev = get32(in + 12);
    h->nonce = get64(in + 16);
    h->id = get64(in + 24);
    h->size = get64(in + 32);
    memcpy(h->token, in + 40, SHAREWIRE_TOKEN_LEN);
    return h->pid > 0 && h->size > 0 ? 0 : -1;
}

/* kind 0..3, flags 4..7, id 8..15, size 16..23, token 24..39 */
void sharewire_msg_pack(const struct sharewire_msg *m, unsigned char out[SHAREWIRE_MSG_LEN])
{
    put32(out, (uint32_t)m->kind);
    put32(out + 4, m->flags);
    put64(out + 8, m->id);
    put64(out + 16, m->size);
    memcpy(out + 24, m->token, SHAREWIRE_TOKEN_LEN);
}

int sharewire_msg_parse(const unsigned char *in, size_t len, struct sharewire_msg *m)
{
    if (len != SHAREWIRE_MSG_LEN)
        return -1;
    uint32_t k = get32(in);
    if (k < SHAREWIRE_OPEN || k > SHAREWIRE_BUSY)
        return -1;
    m->kind = (enum sharewire_kind)k;
    m->flags = get32(in + 4);
    m->id = get64(in + 8);
    m->size = get64(in + 16);
    memcpy(m->token, in + 24, SHAREWIRE_TOKEN_LEN);
    return 0;
}

socklen_t sharewire_address(int pid, uint64_t nonce, struct sockaddr_un *a)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, SHAREWIRE_NAME "%d.%016llx", pid,
                     (unsigned long long)nonce);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}
