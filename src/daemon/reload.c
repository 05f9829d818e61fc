/* reload: SIGHUP. The configuration is read again and checked whole; a
 * broken file is refused and the models run on. Models added appear,
 * removed ones stop, changed ones restart (once idle, never mid-request);
 * what the proxy reads per request follows the file, the addresses it
 * listens on stay until a restart. */
#include "daemon/reload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/table.h"

void reload_config(struct daemon *d)
{
    struct config *c = malloc(sizeof *c);
    char err[512];
    if (!c)
        return;
    if (config_load(d->cfg.path, c, err, sizeof err) < 0) {
        fprintf(stderr, "vram serve: reload refused, the running configuration stays: %s\n", err);
        free(c);
        return;
    }
    for (size_t i = 0; i < d->sched.nmodels; i++) {
        if (d->dm[i].removed)
            continue;
        const struct config_model *nm = NULL;
        for (size_t k = 0; k < c->nmodels; k++)
            if (!strcmp(c->models[k].name, d->smodels[i].name))
                nm = &c->models[k];
        bool changed = nm && (strcmp(nm->command, d->dm[i].cfg.command) ||
                              nm->vram != d->dm[i].cfg.vram || nm->gpus != d->dm[i].cfg.gpus ||
                              nm->width != d->dm[i].cfg.width);
        if (changed && d->smodels[i].state == SCHED_BUSY) {
            d->dm[i].reconfigure = true; /* not mid-request: once it is released */
        } else if (!nm || changed) {     /* stopped now; starts again on demand */
            struct sched_event e = {.kind = SCHED_EV_UNLOAD, .model = (unsigned)i};
            daemon_step(d, &e);
        }
        if (!nm)
            d->dm[i].removed = true;
        else
            table_set(d, (unsigned)i, nm);
    }
    for (size_t k = 0; k < c->nmodels; k++)
        if (daemon_model_index(d, c->models[k].name) < 0 && d->sched.nmodels < CONFIG_MAX_MODELS)
            table_add(d, &c->models[k]);
    memcpy(d->cfg.models, c->models, sizeof c->models);
    d->cfg.nmodels = c->nmodels;
    /* what the proxy reads per request follows the file; the addresses it
     * listens on stay until a restart */
    memcpy(d->cfg.token, c->token, sizeof c->token);
    d->cfg.wait_s = c->wait_s;
    if (c->notes[0])
        fprintf(stderr, "vram serve: %s\n", c->notes);
    fprintf(stderr, "vram serve: configuration reloaded (%zu models)\n", c->nmodels);
    free(c);
}

