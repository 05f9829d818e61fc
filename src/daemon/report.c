/* report: what a scheduler step changed, said once (daemon/report.h). */
#include "daemon/report.h"

#include <stdio.h>
#include <string.h>

#include "host/clock.h"
#include "app/store.h"
#include "core/modelname.h"
#include "daemon/discover.h"
#include "daemon/emit.h"
#include "daemon/evictwhy.h"
#include "daemon/moves.h"

void report_record(struct daemon *d, unsigned i)
{
    const struct sched_model *m = &d->smodels[i];
    const struct dmodel *dm = &d->dm[i];
    if (dm->pid <= 0 || m->state == SCHED_STOPPED || m->state == SCHED_FAILED) {
        store_del_proc(d->store, m->name);
        return;
    }
    struct store_proc p = {
        .pid = dm->pid, .start = dm->start, .gpu = m->gpu, .port = dm->port, .gpus = m->gpus};
    snprintf(p.model, sizeof p.model, "%s", m->name);
    snprintf(p.state, sizeof p.state, "%s",
             m->state == SCHED_SUSPENDED  ? "suspended"
             : m->state == SCHED_STARTING ? "starting"
                                          : "ready");
    p.bytes = m->state == SCHED_SUSPENDED ? dm->host_bytes : m->need;
    if (m->state == SCHED_SUSPENDED) {
        p.gpu = dm->left_gpu;
        p.gpus = dm->left_gpus;
    }
    snprintf(p.how, sizeof p.how, "%s", dm->how);
    store_put_proc(d->store, &p);
}

/* "GPU 0", or "GPUs 0,1" for a model over several. */
static const char *gpus_text(const struct sched_model *m, char *buf, size_t len)
{
    size_t at = (size_t)snprintf(buf, len, "GPU%s ", __builtin_popcount(m->gpus) > 1 ? "s" : "");
    for (int g = 0; g < SCHED_MAX_GPUS && at < len; g++)
        if (m->gpus & (1u << g))
            at += (size_t)snprintf(buf + at, len - at, "%s%d", buf[at - 1] == ' ' ? "" : ",", g);
    if (!m->gpus)
        snprintf(buf, len, "GPU %d", m->gpu);
    return buf;
}

/* The result of a suspend or resume the event reports, said even when the
 * same step moved the model on (suspended and, for a request waiting,
 * resuming at once: the log showed "suspending" then "resuming", never
 * "suspended"). The state it reached stands in for was after. */
static enum sched_state result(struct daemon *d, unsigned i, enum sched_state was,
                               const struct sched_event *ev, double took)
{
    const struct sched_model *m = &d->smodels[i];
    struct dmodel *dm = &d->dm[i];
    if (ev->model != i)
        return was;
    if (ev->kind == SCHED_EV_SUSPENDED && was == SCHED_SUSPENDING && m->state != SCHED_SUSPENDED) {
        if (!ev->ok) { /* it runs on (a preemption refused), or is stopped */
            emit_event(d, i, "suspend failed", took, ev->error && *ev->error ? ev->error : "?");
            return m->state;
        }
        dm->last_suspend_s = took;
        hist_observe(&dm->suspend_h, took);
        dm->suspends++;
        emit_event(d, i, "suspended", took,
                   strcmp(dm->how, "fast") ? "driver checkpoint" : "fast swap");
        return SCHED_SUSPENDED;
    }
    bool up = m->state == SCHED_READY || m->state == SCHED_BUSY;
    if (ev->kind == SCHED_EV_RESUMED && was == SCHED_RESUMING && !ev->ok &&
        m->state != SCHED_SUSPENDED) {
        emit_event(d, i, "resume failed", took, ev->error && *ev->error ? ev->error : "?");
        return SCHED_SUSPENDED;
    }
    if (ev->kind == SCHED_EV_RESUMED && was == SCHED_RESUMING && ev->ok && !up) {
        char where[80];
        dm->last_resume_s = took;
        hist_observe(&dm->resume_h, took);
        dm->resumes++;
        dm->host_bytes = 0;
        emit_event(d, i, "resumed", took, gpus_text(m, where, sizeof where));
        return SCHED_READY;
    }
    return was;
}

void report_change(struct daemon *d, unsigned i, enum sched_state was, const struct sched_event *ev)
{
    const struct sched_model *m = &d->smodels[i];
    struct dmodel *dm = &d->dm[i];
    double took = (double)(daemon_now_ms() - dm->began_ms) / 1000;
    enum sched_state first = was;
    was = result(d, i, was, ev, took);
    if (m->state == was) {
        if (m->state == SCHED_STOPPED || m->state == SCHED_FAILED || m->state == SCHED_STOPPING)
            moves_forget(d, i);
        if (was != first)
            report_record(d, i);
        return;
    }
    char detail[256] = "", where[80];
    gpus_text(m, where, sizeof where);
    /* ready and busy are one state here: a model started or resumed for a
     * proxied request is busy (held) by the time this runs */
    bool up = m->state == SCHED_READY || m->state == SCHED_BUSY;
    bool was_up = was == SCHED_READY || was == SCHED_BUSY;
    bool gone = m->state == SCHED_STOPPED || m->state == SCHED_FAILED;
    if ((up || gone) && dm->held_since_ms) { /* its held requests go on, or fail */
        dm->held_ms += daemon_now_ms() - dm->held_since_ms;
        dm->held_since_ms = 0;
    }
    switch (up ? SCHED_READY : m->state) {
    case SCHED_READY:
        if (m->state == SCHED_READY && was == SCHED_BUSY && dm->reconfigure) {
            struct sched_event e = {.kind = SCHED_EV_UNLOAD, .model = i};
            dm->reconfigure = false;
            daemon_post(d, &e);
        }
        if (was_up)
            break;
        if (was == SCHED_STARTING) {
            dm->last_start_s = took;
            hist_observe(&dm->start_h, took);
            snprintf(detail, sizeof detail, "%s, port %u, %.2f GiB", where, dm->port,
                     (double)m->need / (1 << 30));
            char key[MODELNAME_MAX + 32];
            discover_footprint_name(d, i, key, sizeof key);
            store_set_footprint(d->store, key, d->gpu_name[m->gpu], m->need);
            emit_event(d, i, "ready", took, detail);
        } else if (was == SCHED_RESUMING) {
            dm->last_resume_s = took;
            hist_observe(&dm->resume_h, took);
            dm->resumes++;
            dm->host_bytes = 0;
            emit_event(d, i, "resumed", took, where);
        }
        break;
    case SCHED_SUSPENDED:
        if (was == SCHED_SUSPENDING) {
            dm->out_wall_ms = clock_wall_ms();
            dm->last_suspend_s = took;
            hist_observe(&dm->suspend_h, took);
            dm->suspends++;
            emit_event(d, i, "suspended", took,
                       strcmp(dm->how, "fast") ? "driver checkpoint" : "fast swap");
        } else {
            emit_event(d, i, "resume failed", took, m->error);
        }
        break;
    case SCHED_STOPPED:
        if (was == SCHED_FAILED) { /* unloaded (or the daemon stopping): nothing ran */
            emit_event(d, i, "stopped", 0, "its failure cleared: the next request starts it");
        } else if (was != SCHED_STOPPING) {
            dm->restarts++;
            emit_event(d, i, was == SCHED_STARTING ? "start failed" : "crashed", 0, m->error);
        } else {
            emit_event(d, i, "stopped", 0, NULL);
        }
        break;
    case SCHED_FAILED:
        emit_event(d, i, "failed", 0, m->error);
        break;
    case SCHED_SUSPENDING:
        if (m->preempted) { /* mid-request, for another model: a time slice */
            char why[600];
            dm->held_since_ms = daemon_now_ms();
            evictwhy_note(d, i);
            evictwhy_text(d, i, why, sizeof why);
            snprintf(detail, sizeof detail, "%s, %u request%s held, preemption %u; %s", where,
                     m->holds, m->holds == 1 ? "" : "s", m->preemptions, why);
            emit_event_reason(d, i, "preempted", 0, detail, evictwhy_json(d, i));
            break;
        }
        /* fall through */
    case SCHED_STARTING:
    case SCHED_RESUMING:
    case SCHED_STOPPING: {
        const char *at = m->gpu >= 0 ? where : NULL;
        if (m->state == SCHED_STOPPING && was == SCHED_SUSPENDED)
            at = "from host memory"; /* not on the GPU it left */
        if (m->state == SCHED_STOPPING && dm->stop_why[0]) { /* evicted, not suspended */
            snprintf(detail, sizeof detail, "%s: %s", at ? at : "", dm->stop_why);
            at = detail;
        }
        dm->stop_why[0] = '\0';
        /* the scheduler's choice (an unload or a suspend asked for has no reason) */
        if ((m->state == SCHED_SUSPENDING || m->state == SCHED_STOPPING) && was_up &&
            m->out.why != SCHED_OUT_NONE) {
            char why[600], text[900];
            evictwhy_note(d, i);
            evictwhy_text(d, i, why, sizeof why);
            snprintf(text, sizeof text, "%s; %s", at ? at : "", why);
            emit_event_reason(d, i, sched_state_name(m->state), 0, text, evictwhy_json(d, i));
            break;
        }
        emit_event(d, i, sched_state_name(m->state), 0, at);
        break;
    }
    case SCHED_BUSY:
        break;
    }
    /* its host memory, once its process is gone */
    if (m->state == SCHED_STOPPED || m->state == SCHED_FAILED || m->state == SCHED_STOPPING)
        moves_forget(d, i);
    /* ready and busy are one state for the record: no write per request */
    if (!(up && was_up))
        report_record(d, i);
}
