/* Fuzz target: what one libvramcap reads from another when they share GPU
 * memory by CUDA IPC under fast swap: the 64-byte handle (any process that
 * has it may pass it on) and the messages on the exporter's socket (from a
 * process of the same user, which runs anything). What parses must pack
 * back into the same bytes' meaning. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/sharewire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char h[SHAREWIRE_HANDLE_LEN] = {0}, again[SHAREWIRE_HANDLE_LEN];
    memcpy(h, data, size < sizeof h ? size : sizeof h);
    struct sharewire_handle a, b;
    if (sharewire_handle_parse(h, &a) == 0) {
        sharewire_handle_pack(&a, again);
        if (sharewire_handle_parse(again, &b) < 0 || memcmp(&a, &b, sizeof a) != 0 ||
            memcmp(h, again, sizeof h) != 0)
            abort();
    }
    struct sharewire_msg m, n;
    unsigned char out[SHAREWIRE_MSG_LEN];
    if (sharewire_msg_parse(data, size, &m) == 0) {
        sharewire_msg_pack(&m, out);
        if (sharewire_msg_parse(out, sizeof out, &n) < 0 || memcmp(out, data, size) != 0 ||
            n.kind != m.kind || n.id != m.id || n.size != m.size || n.flags != m.flags)
            abort();
    }
    return 0;
}
