/* shim: libvramcap's start. Reads its settings from the environment once,
 * when the library is loaded (nothing on any hot path reads them again):
 *   VRAM_CAP_GROUP  the group file `vram run` made (a budget shared by all
 *                   the processes it starts)
 *   VRAM_CAP        a cap for this process alone ("6G"), when used without
 *                   `vram run`: LD_PRELOAD=libvramcap.so VRAM_CAP=6G prog
 * With neither, the library only keeps its allocation table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"
#include "shim.h"

struct shim shim;

static void after_fork_child(void)
{
    /* the child owns none of its parent's GPU memory or contexts */
    if (shim.capped)
        group_forget_slot(&shim.group);
    atab_clear(&shim.atab);
    memset(shim.ctx_charged, 0, sizeof shim.ctx_charged);
}

__attribute__((constructor)) static void shim_start(void)
{
    atab_init(&shim.atab);
    pthread_mutex_init(&shim.ctx_mu, NULL);
    pthread_atfork(NULL, NULL, after_fork_child);
    const char *path = getenv("VRAM_CAP_GROUP");
    const char *cap = getenv("VRAM_CAP");
    if (path && *path) {
        if (group_open(&shim.group, path) == 0)
            shim.capped = true;
        else
            fprintf(stderr, "libvramcap: %s is not a vram group; running without a cap\n", path);
        return;
    }
    if (cap && *cap) {
        uint64_t bytes;
        if (units_parse_size(cap, &bytes) < 0 || bytes == 0)
            fprintf(stderr, "libvramcap: VRAM_CAP='%s' is not a size (try 6G); no cap\n", cap);
        else if (group_open_private(&shim.group, bytes) == 0)
            shim.capped = true;
    }
}
