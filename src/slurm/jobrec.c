/* jobrec: a job's record at slurmctld.
 *
 * Per node, a job's GRES request is its tres_per_node ("gres:vram:6G",
 * what --gres wrote); a job of one node that asked through another option
 * (--tres-per-task...) is read from what it was given (gres_total). The
 * AdminComment is read, added to and written back: two steps of one job
 * ending on two nodes at the same instant could lose one's line, which
 * the job's output still holds. */
#include "slurm/jobrec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

/* an AdminComment longer than this is not added to */
#define NOTE_MAX 4000

static void slurm_why(char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "%s: %s", what, slurm_strerror(slurm_get_errno()));
}

int jobrec_vram(uint32_t job, struct gresreq *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    job_info_msg_t *m = NULL;
    if (slurm_load_job(&m, job, SHOW_DETAIL) != SLURM_SUCCESS || !m || m->record_count < 1) {
        slurm_why(err, errlen, "cannot read the job's GRES from slurmctld");
        if (m)
            slurm_free_job_info_msg(m);
        return -1;
    }
    const slurm_job_info_t *j = &m->job_array[0];
    int rc = gresreq_parse(j->tres_per_node, "vram", out);
    if (rc == 0 && !out->found && j->num_nodes == 1)
        rc = gresreq_parse(j->gres_total, "vram", out);
    if (rc < 0)
        snprintf(err, errlen, "cannot read the job's GRES '%s'",
                 j->tres_per_node ? j->tres_per_node : "");
    slurm_free_job_info_msg(m);
    return rc;
}

int jobrec_note(uint32_t job, const char *line, char *err, size_t errlen)
{
    job_info_msg_t *m = NULL;
    if (slurm_load_job(&m, job, SHOW_DETAIL) != SLURM_SUCCESS || !m || m->record_count < 1) {
        slurm_why(err, errlen, "cannot read the job's record");
        if (m)
            slurm_free_job_info_msg(m);
        return -1;
    }
    const char *had = m->job_array[0].admin_comment;
    size_t hl = had ? strlen(had) : 0, ll = strlen(line);
    if (hl + ll + 2 > NOTE_MAX) {
        slurm_free_job_info_msg(m);
        snprintf(err, errlen, "the job's AdminComment is full (%zu bytes)", hl);
        return -1;
    }
    char *note = malloc(hl + ll + 3);
    if (!note) {
        slurm_free_job_info_msg(m);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(note, hl + ll + 3, "%s%s%s", hl ? had : "", hl ? "; " : "", line);
    slurm_free_job_info_msg(m);
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    d.job_id = job;
    d.admin_comment = note;
    int rc = slurm_update_job(&d) == SLURM_SUCCESS ? 0 : -1;
    int e = rc < 0 ? slurm_get_errno() : 0;
    if (e == ESLURM_JOB_FINISHED || e == ESLURM_ALREADY_DONE)
        rc = 1; /* cancelled: slurmctld keeps the record of a finished job as it is */
    else if (rc < 0)
        slurm_why(err, errlen, "cannot write the job's AdminComment");
    free(note);
    return rc;
}
