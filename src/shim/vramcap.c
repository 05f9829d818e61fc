/* vramcap: libvramcap's start. Reads its settings from the environment once,
 * when the library is loaded (nothing on any hot path reads them again):
 *   VRAM_CAP_GROUP  the group files `vram run` made, one per GPU, comma
 *                   separated (a budget on each GPU shared by all the
 *                   processes it starts)
 *   VRAM_CAP        a cap for this process alone on each device it uses
 *                   ("6G"), or per device ordinal ("6G,4G"), when used
 *                   without `vram run`: LD_PRELOAD=libvramcap.so VRAM_CAP=6G
 *                   prog
 *   VRAM_SWAP=1     fast swap: device memory made of VMM calls, driver
 *                   entry points gated, a control socket (swap.c, ctl.c);
 *                   VRAM_SWAP_POOL and VRAM_SWAP_HOST_MAX tune its host
 *                   memory (hostmem.h)
 *   VRAM_DAEMON     PID:START of the vram serve that started this model: the
 *                   one process (and root) its control socket obeys, and
 *                   the process is made undumpable (trust.h)
 * With none, the library only keeps its allocation table. */
#include "shim/vramcap.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim/ctl.h"
#include "shim/hostmem.h"
#include "shim/ownpool.h"
#include "shim/share.h"
#include "shim/shim.h"
#include "shim/trust.h"

static void after_fork_child(void)
{
    /* the child owns none of its parent's GPU memory or contexts */
    if (shim.capped)
        budget_after_fork(&shim.budget);
    allocs_clear(&shim.allocs);
    memset(shim.ctx_charged, 0, sizeof shim.ctx_charged);
    swaptable_clear(&shim.swaptable);
    ownpool_after_fork();
    share_after_fork();
    shim.nctx = 0;
    memset(shim.primary_used, 0, sizeof shim.primary_used);
    ctl_after_fork();
}

__attribute__((constructor)) static void shim_start(void)
{
    trust_init(); /* first: under vram serve, undumpable before anything is held */
    allocs_init(&shim.allocs);
    swaptable_init(&shim.swaptable);
    pthread_mutex_init(&shim.ctx_mu, NULL);
    pthread_atfork(NULL, NULL, after_fork_child);
    const char *swap = getenv("VRAM_SWAP");
    if (swap && strcmp(swap, "1") == 0) {
        char err[160];
        if (hostmem_setup(err, sizeof err) == 0)
            shim.swap = true;
        else
            fprintf(stderr, "libvramcap: %s; fast swap off\n", err);
    }
    const char *path = getenv("VRAM_CAP_GROUP");
    const char *cap = getenv("VRAM_CAP");
    char err[400];
    if (path && *path) {
        if (budget_open_files(&shim.budget, path, err, sizeof err) == 0)
            shim.capped = true;
        else
            fprintf(stderr, "libvramcap: %s; running without a cap\n", err);
        return;
    }
    if (cap && *cap) {
        if (budget_open_sizes(&shim.budget, cap, err, sizeof err) == 0)
            shim.capped = true;
        else
            fprintf(stderr, "libvramcap: %s; no cap\n", err);
    }
}
