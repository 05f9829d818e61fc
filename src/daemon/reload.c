/* reload: SIGHUP. The configuration is read again and checked whole; a
 * broken file is refused and the models run on. Models added appear,
 * removed ones stop, changed ones restart (once idle, never mid-request);
 * each setting takes effect as its row in conf/settings.c says: [serve]'s
 * that a reload cannot apply (the addresses, the memory's limits) are
 * named in the log and wait for a restart. */
#include "daemon/reload.h"

#include <event2/event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/log.h"
#include "conf/confstores.h"
#include "conf/confuser.h"
#include "conf/settings.h"
#include "daemon/serve.h"
#include "host/notify.h"
#include "daemon/table.h"

void reload_config(struct daemon *d)
{
    struct config *c = malloc(sizeof *c);
    char err[512];
    if (!c)
        return;
    notify_send("RELOADING=1");
    int bad = config_load(d->cfg.path, c, err, sizeof err);
    if (bad == 0)
        bad = confstores_add(c, err, sizeof err); /* the stores as they are now */
    if (bad == 0)
        bad = confuser_resolve(c, err, sizeof err); /* the users as they are now */
    if (bad == 0)
        bad = serve_check_users(c, d->shim, err, sizeof err);
    if (bad == 0)
        bad = table_check_sizes(d, c, err, sizeof err);
    for (size_t k = 0; bad == 0 && !d->shim[0] && k < c->nmodels; k++)
        if (config_uses_vramcap(&c->models[k])) {
            snprintf(err, sizeof err,
                     "model %s runs under libvramcap (a cap or fast swap), which this daemon "
                     "did not find when it started (vram serve --check says where it looks)",
                     c->models[k].name);
            bad = -1;
        }
    if (bad < 0) {
        log_msg(LOG_LV_ERROR, "reload refused, the running configuration stays: %s", err);
        notify_send("READY=1");
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
        /* what the rows say a change restarts it for (conf/settings.c), or
         * who it runs as, resolved again */
        char names[256];
        bool changed = nm && (settings_model_differs(nm, &d->dm[i].cfg, SETTINGS_RESTARTS, names,
                                                     sizeof names) ||
                              !runas_same(&nm->run, &d->dm[i].cfg.run));
        if (nm && !changed && d->smodels[i].state != SCHED_STOPPED &&
            settings_model_differs(nm, &d->dm[i].cfg, SETTINGS_STARTS, names, sizeof names))
            log_msg(LOG_LV_NOTICE, "model %s: %s changed: at its next start (vram unload %s)",
                    nm->name, names, nm->name);
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
    /* [serve]'s settings that a reload applies, by their rows
     * (conf/settings.c); the rest wait for a restart, and the log says so */
    char restart[512];
    settings_reload(&d->cfg, c, restart, sizeof restart);
    d->sched.max_loaded = d->cfg.max_loaded;
    d->sched.max_loaded_gpu = d->cfg.max_loaded_gpu;
    bool some = strchr(restart, ',') != NULL;
    if (restart[0])
        log_msg(LOG_LV_WARN,
                "%s changed in %s: a reload cannot apply %s; the running daemon keeps the old "
                "%s until it restarts (systemctl restart vram, or vram serve again)",
                restart, c->path, some ? "them" : "it", some ? "values" : "value");
    if (c->notes[0])
        log_msg(LOG_LV_WARN, "%s", c->notes);
    log_msg(LOG_LV_NOTICE, "configuration reloaded (%zu models)", c->nmodels);
    notify_send("READY=1");
    free(c);
}

static void on_hup(evutil_socket_t sig, short what, void *arg)
{
    (void)sig;
    (void)what;
    reload_config(arg);
}

int reload_listen(struct daemon *d)
{
    d->hup = evsignal_new(d->base, SIGHUP, on_hup, d);
    return d->hup && evsignal_add(d->hup, NULL) == 0 ? 0 : -1;
}
