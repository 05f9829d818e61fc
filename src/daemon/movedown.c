/* movedown: the disk tier's moves down (daemon/movedown.h): a suspended
 * model's host memory to its spill file, a slice at a time, ahead of the
 * next suspend, and what the worker's report of one changes. The files
 * themselves are disktier.c's; the suspends and resumes moves.c's. */
#include "daemon/movedown.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app/log.h"
#include "core/units.h"
#include "daemon/disktier.h"
#include "daemon/emit.h"
#include "daemon/hostpool.h"

/* The daemon's copy of the spill file sent with a job: the model holds
 * its own now, or none. */
void movedown_close_fd(struct dmodel *dm)
{
    if (dm->spill_fd >= 0)
        close(dm->spill_fd);
    dm->spill_fd = -1;
}

/* Who a spill file is given to: the model's user (it runs as another
 * under a root daemon), else nobody new. */
uid_t movedown_owner(const struct dmodel *dm)
{
    return dm->uid != geteuid() ? dm->uid : (uid_t)-1;
}

/* A move down is done: the model's bytes are on disk and its chunks come
 * back, or (failed) nothing changed. */
void movedown_done(struct daemon *d, const struct worker_report *r)
{
    struct dmodel *dm = &d->dm[r->model];
    char a[32], b[128];
    dm->spilling = false;
    enum sched_state st = d->smodels[r->model].state;
    if (st != SCHED_SUSPENDED && st != SCHED_RESUMING) { /* stopped meanwhile */
        disktier_remove(d->disk, r->model);
        return;
    }
    if (!r->ok) { /* what its file held before, or none */
        if (dm->spill_had)
            disktier_set(d->disk, r->model, dm->spill_had);
        else
            disktier_remove(d->disk, r->model);
        log_msg(LOG_LV_WARN, "%s: not moved to disk (%s): it stays in host memory",
                dm->cfg.name, r->error);
        return;
    }
    uint64_t had = dm->spill_had;
    disktier_set(d->disk, r->model, r->disk);
    hostpool_keep(d->pool, r->model, r->held); /* the chunks it gave back */
    dm->spill_ms = r->disk_ms;
    double s = (double)r->disk_ms / 1000;
    uint64_t moved = r->disk > had ? r->disk - had : r->disk;
    char c[32], e[32];
    snprintf(b, sizeof b, "%s (%s on disk, %s in host memory), %.0f MB/s",
             units_fmt_size(moved, a, sizeof a), units_fmt_size(r->disk, c, sizeof c),
             units_fmt_size(r->held, e, sizeof e), s > 0 ? (double)moved / 1e6 / s : 0.0);
    emit_event(d, r->model, "moved to disk", s, b);
}

/* Model i, suspended in host memory, moves down to its spill file: its
 * chunks come back once its bytes are on disk. */
static void spill(struct daemon *d, unsigned i, uint64_t bytes)
{
    struct dmodel *dm = &d->dm[i];
    static struct worker_job j;
    memset(&j, 0, sizeof j);
    j.model = i;
    j.chore = WORKER_SPILL;
    j.pids[0] = dm->moving[0];
    j.npids = 1;
    j.spill_fd = -1;
    j.spill_bytes = bytes;
    uint64_t host = hostpool_given(d->pool, i);
    dm->spill_had = disktier_held(d->disk, i);
    char err[200];
    if (!disktier_has(d->disk, i)) {
        int fd = disktier_make(d->disk, i, dm->cfg.name, movedown_owner(dm), (gid_t)-1, host, &j.spill_max,
                               err, sizeof err);
        if (fd < 0 || j.spill_max < host) {
            if (fd >= 0) {
                close(fd);
                disktier_remove(d->disk, i);
            }
            return; /* no room below either: it stays */
        }
        dm->spill_fd = j.spill_fd = fd;
    } else {
        uint64_t on = disktier_held(d->disk, i), more = bytes && bytes < host ? bytes : host;
        if (disktier_used(d->disk) + more > disktier_budget(d->disk))
            return;
        disktier_set(d->disk, i, on + more); /* reserved until it says */
    }
    dm->chore = dm->spilling = true;
    if (worker_start(d->worker, &j, err, sizeof err) < 0) {
        dm->chore = dm->spilling = false;
        movedown_close_fd(dm);
    }
}

/* Room in host memory for what comes next (need: the largest share a
 * suspend could take that is not readied yet), and host_budget kept while
 * RAM runs short, made by moving suspended models' bytes down to disk a
 * slice at a time. The largest part held in host memory goes first (the
 * least recently used among equals): every suspended model then keeps an
 * equal part there, so a resume reads only the rest at the disk's rate,
 * beside the link's copies, and no resume waits for a whole model to come
 * off the disk (the tail of a trace is its rarely used models). Not while
 * a resume reads the disk: it would wait for the writes. The disk is the
 * slow end, so this runs ahead, after every step, and the next suspend
 * does not wait for it. */
#define SPILL_SLICE (2ULL << 30)

void movedown_room(struct daemon *d, uint64_t need)
{
    if (!d->disk)
        return;
    int pick = -1;
    unsigned n = 0;
    uint64_t cand = 0;
    for (size_t i = 0; i < d->sched.nmodels; i++) {
        const struct dmodel *dm = &d->dm[i];
        const struct sched_model *m = &d->smodels[i];
        if (dm->spilling || (m->state == SCHED_RESUMING && disktier_held(d->disk, (unsigned)i)))
            return;
        uint64_t h = hostpool_given(d->pool, (unsigned)i);
        if (m->state != SCHED_SUSPENDED || m->want || dm->chore || dm->nmoving != 1 ||
            strcmp(dm->how, "fast") || !h)
            continue;
        n++;
        cand += h;
        uint64_t ph = pick >= 0 ? hostpool_given(d->pool, (unsigned)pick) : 0;
        if (pick < 0 || h > ph || (h == ph && m->last_used_ms < d->smodels[pick].last_used_ms))
            pick = (int)i;
    }
    struct hostpool_stats st;
    hostpool_stats(d->pool, &st);
    uint64_t used = st.given + st.charged + st.filling + st.freeing;
    if (pick < 0 || used + need <= st.limit)
        return;
    /* what the suspended models may keep, each alike */
    uint64_t others = used - cand, room = st.limit > others + need ? st.limit - others - need : 0;
    uint64_t fair = room / n, h = hostpool_given(d->pool, (unsigned)pick);
    uint64_t over = used + need - st.limit, slice = h > fair ? h - fair : over;
    slice = slice < over ? slice : over;
    slice = slice < SPILL_SLICE ? slice : SPILL_SLICE;
    spill(d, (unsigned)pick, slice ? slice : 1);
}
