/* Fuzz target: Windows's GPU counter instance names (core/wddm.c), as PDH
 * hands them to vram.exe: one name per line, then the figures joined to a
 * GPU's processes. A name parses only into a pid and a LUID that print
 * back to it; no figure is given to a process the counters did not name. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/wddm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct wddm_set set;
    memset(&set, 0, sizeof set);
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
        uint32_t pid;
        uint64_t luid;
        if (wddm_parse_instance(line, &pid, &luid) == 0 && pid == 0)
            abort();
        wddm_add(&set, line, (double)(size * 1000));
    }
    if (set.n > WDDM_MAX)
        abort();
    struct snap_proc procs[4];
    memset(procs, 0, sizeof procs);
    for (int i = 0; i < 4; i++)
        procs[i].pid = set.n > (size_t)i ? set.v[i].pid : 7u + (unsigned)i;
    struct snap_gpu g = {.procs = procs, .nprocs = 4};
    uint64_t luid = wddm_luid_of(&g, &set);
    wddm_apply(&g, &set, luid);
    for (int i = 0; i < 4; i++) {
        if (!procs[i].used_known)
            continue;
        bool named = false;
        for (size_t k = 0; k < set.n; k++)
            named |= set.v[k].pid == procs[i].pid && set.v[k].luid == luid;
        if (!named || !procs[i].used_wddm)
            abort();
    }
    free(s);
    return 0;
}
