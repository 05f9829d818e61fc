/* runenv: the environment of a capped command.
 *
 * libvramcap goes first in LD_PRELOAD: it must see the driver's entry
 * points before any other preloaded library hands them out. The GPUs are
 * named by UUID, which means the same GPU whatever order CUDA would count
 * them in (CUDA_DEVICE_ORDER), and VRAM_CAP_GROUP lists the group files in
 * the same order, one per GPU. */
#include "app/runenv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/group.h"

static void add(struct runenv *e, const char *name, char *value)
{
    e->var[e->n].name = name;
    e->var[e->n].value = value;
    e->n++;
}

int runenv_make(struct runenv *e, const struct runplace_choice *place, const struct snap *s,
                const char *shim, const char *preload, bool swap)
{
    memset(e, 0, sizeof *e);
    size_t plen = strlen(shim) + (preload ? strlen(preload) : 0) + 2;
    size_t vlen = place->n * (sizeof s->gpus[0].uuid + 1) + 1;
    size_t glen = place->n * (GROUP_PATH_MAX + 1) + 1;
    char *pre = malloc(plen), *visible = malloc(vlen), *groups = malloc(glen);
    char *one = swap ? strdup("1") : NULL;
    if (!pre || !visible || !groups || (swap && !one)) {
        free(pre);
        free(visible);
        free(groups);
        free(one);
        return -1;
    }
    snprintf(pre, plen, preload && *preload ? "%s:%s" : "%s", shim, preload ? preload : "");
    visible[0] = groups[0] = '\0';
    for (size_t i = 0, va = 0, ga = 0; i < place->n; i++) {
        va += (size_t)snprintf(visible + va, vlen - va, "%s%s", i ? "," : "",
                               s->gpus[place->gpu[i]].uuid);
        ga += (size_t)snprintf(groups + ga, glen - ga, "%s%s", i ? "," : "", place->group_path[i]);
    }
    add(e, "LD_PRELOAD", pre);
    add(e, "VRAM_CAP_GROUP", groups);
    add(e, "CUDA_VISIBLE_DEVICES", visible);
    if (one)
        add(e, "VRAM_SWAP", one);
    return 0;
}

void runenv_free(struct runenv *e)
{
    for (unsigned i = 0; i < e->n; i++)
        free(e->var[i].value);
    memset(e, 0, sizeof *e);
}
