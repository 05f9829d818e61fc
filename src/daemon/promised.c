/* promised: others' promises read as `vram run`'s admission reads them
 * (ipc/slices.c: each file its owner's word only, a promise void once its
 * maker is gone), once per snapshot; this daemon's files are the ones whose
 * creator is one of its models' main processes, owned by that model's
 * user. */
#include "daemon/promised.h"

#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/mgroup.h"
#include "ipc/slices.h"

struct tally {
    const struct daemon *d;
    uint64_t *out;
};

static bool ours(const struct daemon *d, const struct slice *s)
{
    for (size_t i = 0; i < d->sched.nmodels; i++)
        if (d->dm[i].pid > 0 && s->v.creator == (int32_t)d->dm[i].pid &&
            s->v.creator_start == d->dm[i].start && s->v.owner == d->dm[i].uid)
            return true;
    return false;
}

static int add(const struct slice *s, void *arg)
{
    struct tally *t = arg;
    if (ours(t->d, s))
        return 0;
    for (size_t g = 0; g < t->d->sched.ngpus && g < t->d->snap.ngpus; g++) {
        const struct snap_gpu *sg = &t->d->snap.gpus[g];
        if (!slices_promises(s, sg->index, sg->uuid, sg->mem.total))
            continue;
        uint64_t u = slices_unused(s);
        t->out[g] = t->out[g] + u < t->out[g] ? UINT64_MAX : t->out[g] + u;
    }
    return 0;
}

void promised_others(const struct daemon *d, uint64_t *out)
{
    for (size_t g = 0; g < d->sched.ngpus; g++)
        out[g] = 0;
    struct tally t = {d, out};
    slices_each(false, add, &t);
}

void promised_apply(struct daemon *d)
{
    uint64_t others[SCHED_MAX_GPUS];
    promised_others(d, others);
    for (size_t g = 0; g < d->sched.ngpus; g++) {
        uint64_t f = d->held_by_others[g] + others[g];
        d->sched.gpus[g].foreign = f < others[g] ? UINT64_MAX : f;
    }
}

bool promised_self_charged(const struct daemon *d, unsigned i)
{
    return d->dm[i].cfg.cap && config_uses_vramcap(&d->dm[i].cfg) && d->shim[0];
}

void promised_note(const struct daemon *d)
{
    struct mgroup_use u[CONFIG_MAX_MODELS * 2];
    size_t n = 0;
    for (size_t i = 0; i < d->sched.nmodels; i++) {
        const struct sched_model *m = &d->smodels[i];
        if (d->dm[i].pid <= 0 || promised_self_charged(d, (unsigned)i) ||
            (m->state != SCHED_READY && m->state != SCHED_STARTING))
            continue;
        for (size_t g = 0; g < d->snap.ngpus && g < d->sched.ngpus; g++) {
            if (!(m->gpus & (1u << g)) || n == sizeof u / sizeof u[0])
                continue;
            const struct snap_gpu *sg = &d->snap.gpus[g];
            uint64_t used = 0;
            for (size_t k = 0; k < sg->nprocs; k++)
                if (daemon_model_of_pid(d, sg->procs[k].pid) == (int)i)
                    used += sg->procs[k].used;
            u[n++] = (struct mgroup_use){d->dm[i].pid, d->dm[i].start, d->dm[i].uid, d->gpu_uuid[g],
                                         used};
        }
    }
    mgroup_note(u, n);
}
