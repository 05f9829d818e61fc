/* fitmachine: the driver's view (free and total memory, processes by pid),
 * joined with vram serve's: its store says which pids are its models, and
 * what each model measured on which kind of GPU. The store is read only and
 * only when its file is the caller's or root's. */
#include "cli/fitmachine.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/clock.h"
#include "app/store.h"
#include "core/err.h"
#include "conf/config.h"
#include "probe/probe.h"

#define DEFAULT_CONFIG "/etc/vram/vram.conf"
#define DEFAULT_STATE  "/var/lib/vram/vram.db"

int fitmachine_serve_open(struct fitmachine_serve *s, const char *path, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    const char *cfg = path ? path : DEFAULT_CONFIG;
    if (path || access(cfg, R_OK) == 0) {
        s->cfg = malloc(sizeof *s->cfg);
        if (!s->cfg)
            return VRAM_EFAIL;
        if (config_load(cfg, s->cfg, err, errlen) < 0) {
            free(s->cfg);
            s->cfg = NULL;
            if (path)
                return VRAM_EINPUT;
        }
    }
    s->store = store_open_readonly(s->cfg ? s->cfg->state : DEFAULT_STATE);
    return VRAM_OK;
}

void fitmachine_serve_close(struct fitmachine_serve *s)
{
    free(s->cfg);
    store_close(s->store);
    memset(s, 0, sizeof *s);
}

const char *fitmachine_served_file(const struct fitmachine_serve *s, const char *name)
{
    for (size_t i = 0; s->cfg && i < s->cfg->nmodels; i++)
        if (!strcmp(s->cfg->models[i].name, name) && s->cfg->models[i].file[0])
            return s->cfg->models[i].file;
    return NULL;
}

void fitmachine_learned(const struct fitmachine_serve *s, const struct fit_report *r,
                        const char *path, const char *name, struct fit_model *fm)
{
    if (!s->store)
        return;
    char want[PATH_MAX], have[PATH_MAX];
    bool by_path = path && realpath(path, want);
    for (size_t i = 0; s->cfg && i < s->cfg->nmodels; i++) {
        const struct config_model *c = &s->cfg->models[i];
        bool match = (name && !strcmp(c->name, name)) ||
                     (by_path && c->file[0] && realpath(c->file, have) && !strcmp(have, want));
        if (!match)
            continue;
        bool any = false;
        for (size_t g = 0; g < r->ngpus; g++)
            any |= (fm->learned[g] = store_footprint(s->store, c->name, r->gpus[g].name)) != 0;
        if (any) {
            snprintf(fm->learned_as, sizeof fm->learned_as, "%s", c->name);
            return;
        }
    }
}

void fitmachine_gpus(struct fit_report *r, const struct fitmachine_serve *s)
{
    char err[512];
    struct probe *p;
    if (probe_open(&p, "/proc", err, sizeof err) < 0)
        return; /* no driver: the estimates stand alone */
    struct store_proc served[64];
    size_t nserved = s->store ? store_procs(s->store, served, 64) : 0;
    struct snap snap;
    memset(&snap, 0, sizeof snap);
    if (probe_sample(p, &snap, PROBE_PROCS, clock_wall_ms()) == VRAM_OK) {
        for (size_t i = 0; i < snap.ngpus && i < FITPLAN_MAX; i++) {
            const struct snap_gpu *sg = &snap.gpus[i];
            struct fit_gpu *g = &r->gpus[i];
            g->index = sg->index;
            snprintf(g->name, sizeof g->name, "%s", sg->name);
            g->free = sg->mem.free;
            g->total = sg->mem.total;
            for (size_t k = 0; k < sg->nprocs && g->nholders < FIT_MAX_HOLDERS; k++) {
                const struct snap_proc *sp = &sg->procs[k];
                if (!sp->used_known || !sp->used)
                    continue;
                struct fit_holder *h = &g->holders[g->nholders++];
                h->pid = sp->pid;
                h->bytes = sp->used;
                snprintf(h->name, sizeof h->name, "%s", sp->host_known ? sp->name : "");
                for (size_t m = 0; m < nserved; m++)
                    if ((uint32_t)served[m].pid == sp->pid && !strcmp(served[m].state, "ready")) {
                        h->served = true;
                        snprintf(h->name, sizeof h->name, "%s", served[m].model);
                    }
            }
        }
        r->ngpus = snap.ngpus < FITPLAN_MAX ? snap.ngpus : FITPLAN_MAX;
        r->have_gpus = r->ngpus > 0;
    }
    snap_free(&snap);
    probe_exiting(p);
    probe_close(p);
}
