/* top_detail: the pane, drawn from the selected row, the snapshot (the
 * process's other GPUs) and t->info (what ops.detail found). */
#include "top/top_detail.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "top/top_cols.h"
#include "core/units.h"

#define PANE_MAX 10

int top_detail_lines(const struct top *t, int room)
{
    if (!t->detail || !t->nrows)
        return 0;
    /* three processes stay in sight above it */
    int lines = room - 3 < PANE_MAX ? room - 3 : PANE_MAX;
    return lines >= 4 ? lines : 0;
}

/* label, then text over as many lines as it needs and the pane has */
static int field(int y, int end, int cols, const char *label, const char *text)
{
    int w = cols - 10;
    size_t len = strlen(text), at = 0;
    if (w < 10 || y >= end)
        return y;
    mvprintw(y, 1, "%-8s ", label);
    do {
        mvprintw(y++, 10, "%.*s", w, text + at);
        at += (size_t)w;
    } while (at < len && y < end);
    return y;
}

void top_detail_draw(const struct top *t, int y, int lines, int cols)
{
    if (lines <= 0 || t->sel >= t->nrows)
        return;
    const struct top_row *r = &t->rows[t->sel];
    const struct snap_proc *p = &r->proc;
    const struct top_info *in = t->info.pid == p->pid && t->info.have ? &t->info : NULL;
    int end = y + lines;
    char line[640], b1[32], b2[32];

    /* the title: who it is, over the pane's width */
    snprintf(line, sizeof line, " pid %u  %s  %s%s ", p->pid, p->name[0] ? p->name : "?",
             p->host_known ? "user " : "", p->host_known ? p->user : "");
    attron(A_REVERSE);
    mvprintw(y, 0, "%-*.*s", cols, cols, line);
    attroff(A_REVERSE);
    y++;

    y = field(y, end, cols, "command",
              in && in->cmdline[0] ? in->cmdline : p->cmdline[0] ? p->cmdline : p->name);
    if (p->host_known && p->start_time) {
        time_t st = (time_t)p->start_time;
        char when[32];
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&st));
        uint64_t now = t->snap.taken_ms / 1000;
        snprintf(line, sizeof line, "%s, running %s   state %s   parent %u", when,
                 top_fmt_elapsed(now > p->start_time ? now - p->start_time : 0, b1, sizeof b1),
                 top_col_cell(TOP_COL_STATE, r, 0, b2, sizeof b2), p->ppid);
        y = field(y, end, cols, "started", line);
    }
    /* every GPU it holds: a process over several has a row on each */
    int len = 0;
    line[0] = '\0';
    for (size_t g = 0; g < t->snap.ngpus; g++)
        for (size_t i = 0; i < t->snap.gpus[g].nprocs; i++) {
            const struct snap_proc *q = &t->snap.gpus[g].procs[i];
            if (q->pid != p->pid || len >= (int)sizeof line - 80)
                continue;
            len += snprintf(line + len, sizeof line - (size_t)len, "%s%zu: %s", len ? "; " : "", g,
                            q->used_known ? units_fmt_size(q->used, b1, sizeof b1) : "n/a");
            if (q->util_known)
                len += snprintf(line + len, sizeof line - (size_t)len,
                                ", SM %u%% MBW %u%% ENC %u%% DEC %u%%", q->sm_util, q->mem_util,
                                q->enc_util, q->dec_util);
        }
    if (r->away == TOP_SUSPENDED && r->gpu != TOP_NO_GPU)
        snprintf(line, sizeof line, "none: suspended from GPU %u, %s moved to host memory (r resumes it)",
                 r->gpu, units_fmt_size(r->away_bytes, b1, sizeof b1));
    else if (r->away)
        snprintf(line, sizeof line, "none now (r resumes it)");
    else if (!len)
        snprintf(line, sizeof line, "none (a parent of GPU processes)");
    y = field(y, end, cols, "GPU", line);
    snprintf(line, sizeof line, "CPU %s%s   RSS %s", top_col_cell(TOP_COL_CPU, r, 0, b1, sizeof b1),
             p->cpu_known ? "%" : "", top_col_cell(TOP_COL_RSS, r, 0, b2, sizeof b2));
    y = field(y, end, cols, "host", line);
    if (in && in->cgroup[0])
        snprintf(line, sizeof line, "%s%s%s", in->cgroup, p->container[0] ? "   container " : "",
                 p->container);
    else
        snprintf(line, sizeof line, "%s", p->container[0] ? p->container : "-");
    y = field(y, end, cols, "cgroup", line);
    if (p->cap)
        snprintf(line, sizeof line, "capped: %s counted of a %s slice",
                 units_fmt_size(p->counted, b1, sizeof b1), units_fmt_size(p->cap, b2, sizeof b2));
    else
        snprintf(line, sizeof line, "not capped");
    y = field(y, end, cols, "vram run", line);
    if (p->model[0])
        snprintf(line, sizeof line, "%s of vram serve: %s", p->model,
                 in && in->model_state[0] ? in->model_state : "asking the daemon...");
    else
        snprintf(line, sizeof line, "no model of vram serve");
    field(y, end, cols, "model", line);
}
